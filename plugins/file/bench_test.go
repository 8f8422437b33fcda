//go:build unix

package file

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// The search benchmark runs Grep and Glob in process (the tools' Call
// methods, without the plugin round trip, which `make bench` measures on
// its own) on the Go source tree, beside ripgrep on the same tree in the
// same run, and prints each time as a ratio to ripgrep's. KOSONG_BENCH_TREE
// names another tree. Without rg on PATH the ripgrep side is skipped.

// benchRepeats is how many times each side runs; the median counts.
const benchRepeats = 7

type searchCase struct {
	name   string
	grep   GrepParams
	glob   *GlobParams
	rg     []string
	target float64 // the ratio to stay under
	repo   bool    // search the copy of the tree made a Git repository with ignore files
}

func searchCases() []searchCase {
	type pat struct {
		name, pattern string
		ignoreCase    bool
		target        float64
	}
	pats := []pat{
		{"literal", "TODO", false, 1.5},
		{"regex-with-literal", `func .*Context\(`, false, 1.5},
		{"ignore-case-literal", "todo", true, 1.5},
		{"regex-without-literal", `[A-Z]{6,}[0-9]`, false, 3},
	}
	modes := []struct{ mode, flag string }{{modeContent, "-n"}, {modeFiles, "-l"}, {modeCount, "-c"}}
	var cases []searchCase
	for _, p := range pats {
		for _, m := range modes {
			rg := []string{"--hidden", "--no-messages", m.flag}
			if p.ignoreCase {
				rg = append(rg, "-i")
			}
			cases = append(cases, searchCase{
				name:   "Grep/" + p.name + "/" + m.mode,
				grep:   GrepParams{Pattern: p.pattern, OutputMode: m.mode, LineNumber: true, IgnoreCase: p.ignoreCase},
				rg:     append(rg, "--", p.pattern, "."),
				target: p.target,
			})
		}
	}
	// Ignore files in force: the same tree as a Git repository.
	for _, c := range slices.Clone(cases) {
		if c.name == "Grep/literal/files_with_matches" || c.name == "Grep/regex-without-literal/count" {
			c.name = strings.Replace(c.name, "Grep/", "Grep-gitignore/", 1)
			c.repo = true
			cases = append(cases, c)
		}
	}
	// Glob lists at most maxGlobResults files, so **/*.go stops early;
	// **/*.s (fewer files) walks the whole tree.
	for _, ext := range []string{"go", "s"} {
		cases = append(cases, searchCase{
			name:   "Glob/**/*." + ext,
			glob:   &GlobParams{Pattern: "**/*." + ext, IncludeDirs: true},
			rg:     []string{"--hidden", "--no-messages", "--files", "-g", "*." + ext, "."},
			target: 1.5,
		})
	}
	return cases
}

func benchTree(b *testing.B) string {
	if t := os.Getenv("KOSONG_BENCH_TREE"); t != "" {
		return t
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("no Go tree: %v", err)
	}
	return strings.TrimSpace(string(out)) + "/src"
}

// repoCopy makes a Git repository of tree for the ignore-file cases: a copy
// of hard links (no data copied) with a .git directory, a .gitignore and an
// info/exclude file. It returns "" where that cannot be made.
func repoCopy(b *testing.B, tree string) string {
	dir := b.TempDir() + "/src"
	if err := exec.Command("cp", "-al", tree, dir).Run(); err != nil {
		return ""
	}
	files := map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/info/exclude": "*.syso\n",
		".gitignore":        "testdata/\n*.s\n/cmd/internal/\n!keep.s\n",
		"net/.gitignore":    "*_test.go\n",
	}
	for name, content := range files {
		p := dir + "/" + name
		if err := os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755); err != nil {
			return ""
		}
		_ = os.Remove(p) // a hard link: never write through it
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return ""
		}
	}
	return dir
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkSearch times Grep (head_limit 0: every result, as rg gives) and
// Glob against ripgrep.
func BenchmarkSearch(b *testing.B) {
	tree := benchTree(b)
	rg, rgErr := exec.LookPath("rg")
	ws := workspace{dir: tree}
	grep, glob := &Grep{ws: ws}, &Glob{ws: ws}
	repo := repoCopy(b, tree)
	repoGrep := &Grep{ws: workspace{dir: repo}}
	ctx := context.Background()
	type row struct {
		name            string
		ours, theirs    time.Duration
		oursCPU         time.Duration // user + system
		theirsCPU       time.Duration
		results, target float64
		rgResults       float64
	}
	var rows []row
	for _, c := range searchCases() {
		b.Run(c.name, func(b *testing.B) {
			dir, grep := tree, grep
			if c.repo {
				if repo == "" {
					b.Skip("cannot make a Git repository of the tree (cp -al)")
				}
				dir, grep = repo, repoGrep
			}
			var r row
			for b.Loop() {
				// The two sides take turns, so that both see the same load.
				var ours, theirs, oursCPU, theirsCPU []time.Duration
				lines, rgLines := 0, 0
				for range benchRepeats {
					cpu0 := cpuTime()
					start := time.Now()
					var res string
					if c.glob != nil {
						res = outputText(glob.Call(ctx, *c.glob))
					} else {
						res = outputText(grep.Call(ctx, c.grep))
					}
					ours = append(ours, time.Since(start))
					oursCPU = append(oursCPU, cpuTime()-cpu0)
					lines = strings.Count(res, "\n")
					if rgErr == nil {
						cmd := exec.Command(rg, c.rg...)
						cmd.Dir = dir
						var out strings.Builder
						cmd.Stdout = &out
						start := time.Now()
						_ = cmd.Run() // exit 1: no match
						theirs = append(theirs, time.Since(start))
						if cmd.ProcessState != nil {
							theirsCPU = append(theirsCPU, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
						}
						rgLines = strings.Count(out.String(), "\n")
					}
				}
				r = row{name: c.name, ours: median(ours), results: float64(lines), rgResults: float64(rgLines), target: c.target}
				r.oursCPU = median(oursCPU)
				if len(theirs) > 0 {
					r.theirs, r.theirsCPU = median(theirs), median(theirsCPU)
				}
			}
			b.ReportMetric(float64(r.ours.Microseconds())/1e3, "ms")
			if r.theirs > 0 {
				b.ReportMetric(float64(r.theirs.Microseconds())/1e3, "rg-ms")
				b.ReportMetric(float64(r.ours)/float64(r.theirs), "x-rg")
			}
			rows = append(rows, r)
		})
	}
	fmt.Printf("\nSearch on %s, in process (Tool.Call, head_limit 0), GOMAXPROCS %d, median of %d turns each (wall time; cpu = user+system):\n", tree, runtime.GOMAXPROCS(0), benchRepeats)
	if rgErr != nil {
		fmt.Printf("  rg is not installed (apt-get install ripgrep): ratios skipped.\n")
	}
	for _, r := range rows {
		if r.theirs == 0 {
			fmt.Printf("  %-44s %7.1f ms  %6.0f lines\n", r.name, ms(r.ours), r.results)
			continue
		}
		ratio := float64(r.ours) / float64(r.theirs)
		verdict := "ok"
		if ratio > r.target {
			verdict = "OVER"
		}
		fmt.Printf("  %-44s %7.1f ms  rg %6.1f ms  %5.2fx rg (target %.1fx) %-4s  cpu %5.2fx rg  %6.0f lines (rg %.0f)\n",
			r.name, ms(r.ours), ms(r.theirs), ratio, r.target, verdict, float64(r.oursCPU)/float64(max(r.theirsCPU, 1)), r.results, r.rgResults)
	}
}

func outputText(r pluginsdk.Result) string {
	var sb strings.Builder
	for _, p := range r.Output {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
