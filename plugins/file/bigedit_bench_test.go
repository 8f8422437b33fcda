//go:build unix

package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// BenchmarkBigEdit edits a 1 GiB text file with each editing tool in a
// child process (this test binary, run again as TestBigEditChild) and
// reports the child's peak resident memory, beside that of a child that
// only sets up the tools. The tools stream the file, so the difference must
// stay under bigEditBoundMiB, the bound docs/safety-and-failure.md states.
// The file is written to b.TempDir() (about 2 GiB of disk at the peak, with
// StrReplaceFile's temporary copy) and removed afterwards.

// bigEditBoundMiB is the most memory an edit of any file may take beyond
// the plugin's own.
const bigEditBoundMiB = 64

const (
	bigEditEnv   = "KOSONG_BIGEDIT_CALL" // tool and arguments, JSON, for the child
	bigEditBlock = 1 << 20
	bigEditSize  = 1 << 30
)

type bigEditCall struct {
	Name string          `json:"name"` // "" only sets the tools up
	Dir  string          `json:"dir"`
	Args json.RawMessage `json:"args"`
}

func BenchmarkBigEdit(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.txt")
	start := time.Now()
	if err := writeBigFile(path); err != nil {
		b.Fatal(err)
	}
	b.Logf("wrote %d MiB in %v", bigEditSize>>20, time.Since(start).Round(time.Millisecond))
	calls := []struct{ name, tool, args string }{
		{"baseline", "", `{}`},
		{"ReadFile-tail", "ReadFile", `{"path": "big.txt", "line_offset": -20}`},
		{"ReadFile-middle", "ReadFile", `{"path": "big.txt", "line_offset": 5000000, "n_lines": 100}`},
		{"StrReplaceFile-one", "StrReplaceFile", `{"path": "big.txt", "edit": {"old": "the-only-needle", "new": "the-replaced-needle"}}`},
		{"StrReplaceFile-all", "StrReplaceFile", `{"path": "big.txt", "edit": [{"old": "block-mark", "new": "BLOCK-MARK", "replace_all": true}, {"old": "lorem", "new": "Lorem", "replace_all": true}]}`},
		{"WriteFile-append", "WriteFile", `{"path": "big.txt", "content": "one more line\n", "mode": "append"}`},
		{"WriteFile-overwrite", "WriteFile", `{"path": "big.txt", "content": "small now\n"}`},
	}
	type row struct {
		name         string
		peak, over   float64
		took         time.Duration
		brief, bytes string
	}
	var rows []row
	base := 0.0
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			var r row
			for b.Loop() {
				peak, took, brief, err := runBigEditChild(bigEditCall{Name: c.tool, Dir: dir, Args: json.RawMessage(c.args)})
				if err != nil {
					b.Fatal(err)
				}
				r = row{name: c.name, peak: peak, took: took, brief: brief}
			}
			if c.tool == "" {
				base = r.peak
			}
			r.over = r.peak - base
			if fi, err := os.Stat(path); err == nil {
				r.bytes = fmt.Sprintf("%d MiB after", fi.Size()>>20)
			}
			b.ReportMetric(r.peak, "peak-RSS-MiB")
			b.ReportMetric(r.over, "over-baseline-MiB")
			if r.over > bigEditBoundMiB {
				b.Errorf("%s: peak RSS %.1f MiB, %.1f MiB over the baseline, above the bound of %d MiB", c.name, r.peak, r.over, bigEditBoundMiB)
			}
			rows = append(rows, r)
		})
	}
	fmt.Printf("\nEdits of a %d MiB text file, each in a child process (bound: %d MiB over the baseline), GOMAXPROCS %d:\n",
		bigEditSize>>20, bigEditBoundMiB, runtime.GOMAXPROCS(0))
	for _, r := range rows {
		fmt.Printf("  %-22s peak RSS %7.1f MiB  (+%6.1f MiB)  %8.1f s  %s  %s\n", r.name, r.peak, r.over, r.took.Seconds(), r.bytes, r.brief)
	}
}

// writeBigFile writes bigEditSize bytes of numbered text lines: each 1 MiB
// block holds a "block-mark" and "lorem"s, the last one "the-only-needle".
func writeBigFile(path string) error {
	var block bytes.Buffer
	for i := 0; block.Len() < bigEditBlock-200; i++ {
		fmt.Fprintf(&block, "%07d lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt\n", i)
	}
	block.WriteString("block-mark\n")
	block.WriteString(strings.Repeat("x", bigEditBlock-block.Len()-1) + "\n")
	last := bytes.Replace(block.Bytes(), []byte("block-mark"), []byte("the-only-needle\nblock-mark"), 1)[:bigEditBlock]
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for i := 0; i < bigEditSize/bigEditBlock; i++ {
		chunk := block.Bytes()
		if i == bigEditSize/bigEditBlock-1 {
			chunk = last
		}
		if _, err := f.Write(chunk); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}

// runBigEditChild runs one call in a child process and returns its peak RSS
// in MiB, its run time and the result's brief.
func runBigEditChild(call bigEditCall) (peakMiB float64, took time.Duration, brief string, err error) {
	spec, err := json.Marshal(call)
	if err != nil {
		return 0, 0, "", err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBigEditChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), bigEditEnv+"="+string(spec))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start)
	if err != nil {
		return 0, took, "", fmt.Errorf("%s: %v\n%s", call.Name, err, out.String())
	}
	_, after, ok := strings.Cut(out.String(), "RESULT ")
	if !ok {
		return 0, took, "", fmt.Errorf("%s: no result in\n%s", call.Name, out.String())
	}
	brief, _, _ = strings.Cut(after, "\n")
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, took, brief, fmt.Errorf("no rusage")
	}
	peak := float64(ru.Maxrss) / 1024 // KiB on Linux
	if runtime.GOOS == "darwin" {
		peak /= 1024 // bytes there
	}
	return peak, took, brief, nil
}

// TestBigEditChild is the child process of BenchmarkBigEdit; it does
// nothing in an ordinary test run.
func TestBigEditChild(t *testing.T) {
	spec := os.Getenv(bigEditEnv)
	if spec == "" {
		t.Skip("only run by BenchmarkBigEdit")
	}
	var call bigEditCall
	if err := json.Unmarshal([]byte(spec), &call); err != nil {
		t.Fatal(err)
	}
	env := fixedEnv{dir: call.Dir}
	read, err := NewReadFile(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	write, err := NewWriteFile(approveAll{}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	replace, err := NewStrReplaceFile(approveAll{}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var r pluginsdk.Result
	switch call.Name {
	case "":
		r = pluginsdk.Ok("").WithBrief("set up only")
	case "ReadFile":
		var p ReadParams
		if err := json.Unmarshal(call.Args, &p); err != nil {
			t.Fatal(err)
		}
		r = read.Call(ctx, p)
	case "WriteFile":
		var p WriteParams
		if err := json.Unmarshal(call.Args, &p); err != nil {
			t.Fatal(err)
		}
		r = write.Call(ctx, p)
	case "StrReplaceFile":
		r = replace.Call(ctx, call.Args)
	default:
		t.Fatalf("unknown tool %q", call.Name)
	}
	if r.Kind != pluginsdk.KindOk {
		t.Fatalf("%s: %s", call.Name, r.Message)
	}
	diffBytes := 0
	for _, d := range r.Display {
		raw, _ := json.Marshal(d.Data)
		diffBytes += len(raw)
	}
	fmt.Printf("RESULT %s; %d bytes of output, %d of display\n", r.Brief, len(r.Text()), diffBytes)
}

type fixedEnv struct{ dir string }

func (fixedEnv) OS() string             { return runtime.GOOS }
func (fixedEnv) Shell() pluginsdk.Shell { return pluginsdk.Shell{Name: "sh", Path: "/bin/sh"} }
func (e fixedEnv) WorkDir() string      { return e.dir }
func (fixedEnv) Now() time.Time         { return time.Now() }
