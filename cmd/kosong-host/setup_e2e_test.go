//go:build unix

package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestFirstRunSetup: with no provider configured, kosong-host in a
// terminal asks for a provider, a key (not echoed) and a model, writes the
// configuration file with mode 0600 and starts the session with them.
func TestFirstRunSetup(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Set up and answering."}})
	cfgHome := t.TempDir()
	work := writeFiles(t, map[string]string{"s.md": "hi", "agent.yaml": echoAgent})
	term := startTerminal(t, work, []string{"XDG_CONFIG_HOME=" + cfgHome}, "--agent", filepath.Join(work, "agent.yaml"))
	term.Expect("No model provider is configured yet.")
	term.Expect("Provider [1-5]: ")
	term.Send("9\r")
	term.Expect("is not one of them")
	term.Send("5\r")
	term.Expect("Base URL")
	term.Send(srv.BaseURL() + "\r")
	term.Expect("API key")
	term.Send("sk-secret-test-key\r")
	term.Expect("Model: ")
	term.Send("test-model\r")
	path := filepath.Join(cfgHome, "kosong-host", "config.yaml")
	term.Expect("Wrote " + path + " (mode 0600)")
	term.Expect("model custom/test-model")
	term.Expect("/help for commands")
	term.Send("hello\r")
	term.Expect("Set up and answering.")
	term.Exit()
	if strings.Contains(term.Output(), "sk-secret-test-key") {
		t.Error("the API key was echoed")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	f, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.DefaultModel != "test-model" || f.Providers["custom"].APIKey != "sk-secret-test-key" || f.Providers["custom"].BaseURL != srv.BaseURL() {
		t.Errorf("config %+v", f)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-secret-test-key" || reqs[0].Chat.Model != "test-model" {
		t.Fatalf("requests %+v", reqs)
	}
}

// TestNoProviderWithoutTerminal: without a terminal, a run with no
// provider fails in one line naming kosong-host setup, and setup itself
// refuses to ask; an existing configuration file is never overwritten.
func TestNoProviderWithoutTerminal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.md": "hi", "agent.yaml": echoAgent})
	r := runHost(t, dir, "", "--agent", "agent.yaml", "run", "-p", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "no provider configured: run `kosong-host setup` in a terminal, or set KIMI_API_KEY") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = runHost(t, dir, "", "setup")
	if r.code != 2 || !strings.Contains(r.stderr, "run kosong-host setup in a terminal") {
		t.Fatalf("setup: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSetupKeepsAnExistingFile: setup never overwrites a configuration.
func TestSetupKeepsAnExistingFile(t *testing.T) {
	cfgHome := t.TempDir()
	path := filepath.Join(cfgHome, "kosong-host", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	term := startTerminal(t, t.TempDir(), []string{"XDG_CONFIG_HOME=" + cfgHome}, "setup")
	term.Expect(path + " exists and is kept")
	<-term.done
	var ee *exec.ExitError
	if err := term.cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("setup over an existing file: %v, want exit 2", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "# mine\n" {
		t.Fatalf("the file changed: %q", data)
	}
}
