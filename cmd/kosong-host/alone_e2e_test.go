//go:build unix

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestAloneStartsASession: kosong-host with no command, in a terminal, is
// the interactive session of run.
func TestAloneStartsASession(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Hello from the session."}})
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "kosong-host"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgHome, "kosong-host", "config.yaml"),
		[]byte("default_model: small\n"+modelConfig(srv.BaseURL())), 0o600); err != nil {
		t.Fatal(err)
	}
	work := writeFiles(t, map[string]string{"s.md": "hi", "agent.yaml": echoAgent})
	term := startTerminal(t, work, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--agent", filepath.Join(work, "agent.yaml"))
	term.Expect("model local/small-model")
	term.Expect("/help for commands")
	term.Send("hello\r")
	term.Expect("Hello from the session.")
	term.Exit()
	if got := term.UserMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("the model was sent %q", got)
	}
}

// TestAloneWithoutTerminal: without a terminal kosong-host alone shows the
// usage and exits 2 naming the command to give; --help still helps.
func TestAloneWithoutTerminal(t *testing.T) {
	dir := t.TempDir()
	r := runHost(t, dir, "a prompt on stdin\n")
	if r.code != 2 || !strings.Contains(r.stderr, "Usage:") || !strings.Contains(r.stderr, "no command: without a terminal give one, e.g. kosong-host run -p PROMPT") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runHost(t, dir, "", "--help"); r.code != 0 || !strings.Contains(r.stdout, "kosong-host alone, in a terminal, starts an interactive session") {
		t.Fatalf("--help: exit %d\n%s", r.code, r.stdout)
	}
}

// TestOneShotNamesNoSessionKeys: a one-shot run never points at keys or
// commands of the interactive session (/last, Ctrl-O) it does not have.
func TestOneShotNamesNoSessionKeys(t *testing.T) {
	r := oneShotRun(t, `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "seq 1 60"}}]
  - text: "Counted."
`, "", "-p", "count", "--yolo")
	if r.code != 0 || r.stdout != "Counted.\n" || !strings.Contains(r.stderr, "more lines") {
		t.Fatalf("exit %d, stdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, hint := range []string{"Ctrl-O", "/last"} {
		if strings.Contains(r.stderr, hint) {
			t.Errorf("a one-shot run names %s:\n%s", hint, r.stderr)
		}
	}
}
