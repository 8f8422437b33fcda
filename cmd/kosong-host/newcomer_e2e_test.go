package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestOneShotOpenSilentStdin: -p with stdin an open pipe that sends
// nothing does not wait for it: after a bounded wait the turn runs without
// it and stderr says so; --no-stdin does not wait at all.
func TestOneShotOpenSilentStdin(t *testing.T) {
	work := writeFiles(t, map[string]string{"script.yaml": "turns:\n  - text: Done.\n"})
	for _, tt := range []struct {
		name string
		args []string
		note bool
	}{
		{"bounded wait", nil, true},
		{"--no-stdin", []string{"--no-stdin"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() }) // w stays open while the run lasts
			args := append([]string{"--trust", "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run", "--provider", "scripted",
				"--script", "script.yaml", "-p", "hi"}, tt.args...)
			cmd := exec.Command(kosongHost(t), args...)
			cmd.Dir, cmd.Stdin = work, r
			cmd.Env = hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil || out.String() != "Done.\n" {
					t.Fatalf("%v, stdout %q\nstderr %s", err, out.String(), errb.String())
				}
			case <-time.After(expectWithin):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("still waiting on stdin after %s; stderr:\n%s", expectWithin, errb.String())
			}
			if got := strings.Contains(errb.String(), "stdin sent nothing within"); got != tt.note {
				t.Fatalf("note on stderr %v, want %v:\n%s", got, tt.note, errb.String())
			}
		})
	}
}

// TestGroupTypos: a mistyped subcommand of a group exits 2 with a "did
// you mean", as a mistyped command does; the group alone shows its help.
func TestGroupTypos(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tools", "lst"}, 2, `unknown command "lst" for "kosong-host tools" (did you mean list?)`},
		{[]string{"plugins", "lok"}, 2, `unknown command "lok" for "kosong-host plugins" (did you mean lock?)`},
		{[]string{"mcp", "srve"}, 2, "(did you mean serve?)"},
		{[]string{"tools"}, 0, ""},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runHost(t, dir, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
			if tt.code == 0 && !strings.Contains(r.stdout, "Available Commands") {
				t.Fatalf("no help: %q", r.stdout)
			}
		})
	}
}

// TestRunHelpIsText: run --help prints no control byte (--resume's
// default included).
func TestRunHelpIsText(t *testing.T) {
	r := runHost(t, t.TempDir(), "", "run", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "--resume") || !strings.Contains(r.stdout, "--no-stdin") {
		t.Fatalf("exit %d\n%s", r.code, r.stdout)
	}
	if i := strings.IndexFunc(r.stdout, func(c rune) bool { return c < ' ' && c != '\n' && c != '\t' }); i >= 0 {
		t.Fatalf("control byte %q in the help: %q", r.stdout[i], r.stdout[max(i-40, 0):min(i+20, len(r.stdout))])
	}
}

// TestFailedOneShotPrintsNoAnswer: a turn that fails after the model said
// something on the way to a tool call has no answer: stdout stays empty,
// the text is on stderr, exit 1.
func TestFailedOneShotPrintsNoAnswer(t *testing.T) {
	r := oneShotRun(t, `
turns:
  - text: "Let me look first."
    tool_calls: [{id: c1, name: Echo, arguments: {text: x}}]
`, "", "-p", "go")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "Let me look first.") {
		t.Fatalf("exit %d, stdout %q (want none)\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestSubfolderFindsProjectAgent: from a sub-folder of a repository the
// project's .kosong/agent.yaml is used, under the project folder's trust:
// ignored with a word while that folder is untrusted, used once it is
// trusted (or with --trust); nothing above the repository root is looked at.
func TestSubfolderFindsProjectAgent(t *testing.T) {
	root := writeFiles(t, map[string]string{
		".git/HEAD":           "ref: refs/heads/main\n",
		".kosong/agent.yaml":  "version: 1\nagent:\n  name: proj\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\"]\n",
		".kosong/s.md":        "hi",
		"src/pkg/keep.txt":    "x",
		"outside/.git/HEAD":   "ref: refs/heads/main\n",
		"outside/sub/keep.md": "x",
	})
	sub := filepath.Join(root, "src", "pkg")
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}

	r := runUntrusted(t, sub, env, "", "tools", "list")
	if r.code != 0 || strings.Contains(r.stdout, "Echo") || !strings.Contains(r.stderr, "ignoring "+filepath.Join(root, ".kosong", "agent.yaml")) ||
		!strings.Contains(r.stderr, "kosong-host trust "+root) {
		t.Fatalf("untrusted: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runUntrusted(t, sub, env, "", "--trust", "tools", "list"); r.code != 0 || !strings.Contains(r.stdout, "Echo") {
		t.Fatalf("--trust: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runUntrusted(t, root, env, "", "trust"); r.code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	if r := runUntrusted(t, sub, env, "", "tools", "list"); r.code != 0 || !strings.Contains(r.stdout, "Echo") || strings.Contains(r.stderr, "ignoring") {
		t.Fatalf("trusted: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// A repository inside: its root stops the lookup.
	if r := runUntrusted(t, filepath.Join(root, "outside", "sub"), env, "", "tools", "list"); r.code != 0 || strings.Contains(r.stdout, "Echo") {
		t.Fatalf("another repository: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
