//go:build unix

package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// modelConfig is a configuration of two aliases of one server, with
// different context windows.
func modelConfig(baseURL string) string {
	return fmt.Sprintf(`providers:
  local:
    type: openai-compatible
    base_url: %s
    api_key: test-key
models:
  small: {provider: local, model: small-model, max_context_size: 1000}
  big: {provider: local, model: big-model, max_context_size: 200000}
`, baseURL)
}

// TestTerminalModelSwitch: /model refuses a name the configuration does
// not know (nothing is sent with it), and after /model big the usage line
// measures against big's window and the next request names big's model.
func TestTerminalModelSwitch(t *testing.T) {
	usage := &openaitest.Usage{PromptTokens: 400, CompletionTokens: 100}
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"First."}, Usage: usage},
		openaitest.Response{Text: []string{"Second."}, Usage: usage})
	work := writeFiles(t, map[string]string{"config.yaml": modelConfig(srv.BaseURL()), "s.md": "hi", "agent.yaml": echoAgent})
	term := startTerminal(t, work, nil, "--trust", "--agent", filepath.Join(work, "agent.yaml"), "run", "--config", "config.yaml", "--model", "small")
	term.Expect("/help for commands")
	term.Send("one\r")
	term.Expect("First.")
	term.Expect("50% of 1k")
	term.Send("/model nope\r")
	term.Expect(`model "nope" is not a model alias`)
	term.Expect("the model stays local/small-model")
	term.Send("/model bgi\r")
	term.Expect("(did you mean big?)")
	term.Send("/model big\r")
	term.Expect("model: local/big-model (context window 200k)")
	term.Send("two\r")
	term.Expect("Second.")
	term.Expect("0% of 200k")
	term.Exit()
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []string{"small-model", "big-model"} {
		if !strings.Contains(string(reqs[i].Body), `"model":"`+want+`"`) {
			t.Errorf("request %d does not name %s: %s", i+1, want, reqs[i].Body)
		}
	}
}

// TestModelFlagRefusesUnknownNames: --model takes an alias, an alias's
// model or PROVIDER/MODEL; a near miss of an alias and an unknown plain
// name exit 2 before anything is sent.
func TestModelFlagRefusesUnknownNames(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Answer."}}, openaitest.Response{Text: []string{"Answer."}})
	work := writeFiles(t, map[string]string{"config.yaml": modelConfig(srv.BaseURL()), "s.md": "hi", "agent.yaml": echoAgent})
	tests := []struct {
		model, want string
		code        int
	}{
		{"bgi", "--model bgi is not a model alias (did you mean big?)", 2},
		{"nope", `model "nope" is not a model alias`, 2},
		{"big", "", 0},
		{"local/other-model", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			r := runHost(t, work, "", "--agent", "agent.yaml", "run", "--config", "config.yaml", "--model", tt.model, "-p", "hi")
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (the refused names send nothing)", n)
	}
}
