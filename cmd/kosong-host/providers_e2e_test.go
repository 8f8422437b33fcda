package main_test

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/googletest"
)

// TestRunNativeProviders: a one-shot turn with two tool calls through the
// real plugins, against servers speaking Anthropic's and Gemini's streaming
// formats, given by ANTHROPIC_BASE_URL and GOOGLE_BASE_URL.
func TestRunNativeProviders(t *testing.T) {
	tests := []struct {
		provider string
		start    func(t *testing.T) (url string, bodies func() []string)
		keyVar   string
		baseVar  string
	}{
		{"anthropic", func(t *testing.T) (string, func() []string) {
			srv := anthropictest.NewServer(t,
				anthropictest.Response{Blocks: []anthropictest.Block{
					anthropictest.Thinking("sig-1", "I should call both tools."),
					anthropictest.Text("Checking."),
					anthropictest.ToolUse("toolu_1", "Echo", `{"text":"ping"}`, 3),
					anthropictest.ToolUse("toolu_2", "Shell", `{"command":"echo from-shell"}`, 5),
				}},
				anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("All ", "done.")}},
			)
			return srv.URL, func() []string {
				var out []string
				for _, r := range srv.Requests() {
					out = append(out, string(r.Body))
				}
				return out
			}
		}, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
		{"google", func(t *testing.T) (string, func() []string) {
			srv := googletest.NewServer(t,
				googletest.Response{Text: []string{"Checking."}, Calls: []googletest.Call{
					{Name: "Echo", Args: `{"text":"ping"}`, Signature: "c2ln"},
					{Name: "Shell", Args: `{"command":"echo from-shell"}`},
				}},
				googletest.Response{Text: []string{"All ", "done."}},
			)
			return srv.URL, func() []string {
				var out []string
				for _, r := range srv.Requests() {
					out = append(out, string(r.Body))
				}
				return out
			}
		}, "GOOGLE_API_KEY", "GOOGLE_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			url, bodies := tt.start(t)
			env := []string{tt.keyVar + "=test-key", tt.baseVar + "=" + url}
			r := runWithEnv(t, env, "run", "--provider", tt.provider, "-p", "Say hi through the tools.", "--yolo")
			if r.code != 0 || !strings.Contains(r.stdout, "All done.") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			b := bodies()
			if len(b) != 2 || !strings.Contains(b[1], "ping") || !strings.Contains(b[1], "from-shell") {
				t.Fatalf("the second request lacks the tool results: %q", b)
			}
		})
	}
}

func TestRunNativeProviderMissingKey(t *testing.T) {
	for _, tt := range []struct{ provider, want string }{
		{"anthropic", "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set (provider anthropic)"},
		{"google", "GOOGLE_API_KEY"},
	} {
		r := runWithEnv(t, nil, "run", "--provider", tt.provider, "-p", "hi")
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d stderr %q", tt.provider, r.code, r.stderr)
		}
	}
}

func TestModelsListsProviders(t *testing.T) {
	r := runWithEnv(t, []string{"ANTHROPIC_API_KEY=x"}, "models")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"kimi", "openai", "anthropic", "google", "ANTHROPIC_API_KEY"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("models output lacks %q:\n%s", want, r.stdout)
		}
	}
}
