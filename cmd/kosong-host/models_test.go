package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runModels(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newModelsCmd(&globals{})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// modelsEnv isolates the command from the machine's keys and files.
func modelsEnv(t *testing.T, keys map[string]string) string {
	t.Helper()
	for _, k := range []string{"KIMI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "WORK_KEY"} {
		t.Setenv(k, keys[k])
	}
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Chdir(t.TempDir()) // no .env
	return xdg
}

func TestModelsCommand(t *testing.T) {
	const cfg = `default_model: sonnet
providers:
  work:
    type: anthropic
    api_key_env: WORK_KEY
  local:
    type: openai-compatible
    base_url: http://localhost:8080/v1
  gem:
    type: google
    api_key: g-file
models:
  sonnet:
    provider: work
    model: claude-sonnet-4-5
    max_context_size: 200000
    capabilities: [thinking, image_in]
  qwen:
    provider: local
    model: qwen3
  k2:
    provider: kimi
    model: kimi-k2
`
	tests := []struct {
		name    string
		keys    map[string]string
		file    string // written to the default path when set
		args    []string
		want    []string
		notWant []string
		code    int // exit code of a failure
	}{
		{name: "--config", keys: map[string]string{"ANTHROPIC_API_KEY": "a"}, args: []string{"--config", "CFG"},
			want: []string{
				"Configuration: CFG\n",
				"sonnet (default)", "claude-sonnet-4-5", "200000", "thinking,image_in", "missing: WORK_KEY is not set (provider work)",
				"missing: KIMI_API_KEY is not set (provider kimi)",
				"local", "openai-compatible", "http://localhost:8080/v1", "none (not required)",
				"set (api_key in the file)",
				"kimi", "KIMI_API_KEY missing", "KIMI_BASE_URL, KIMI_MODEL_NAME",
				"openai", "OPENAI_API_KEY missing",
				"anthropic", "ANTHROPIC_API_KEY set", "claude-sonnet-4-5",
				"google", "GOOGLE_API_KEY (or GEMINI_API_KEY) missing", "gemini-3-pro-preview",
				"scripted", "--script FILE",
			}},
		{name: "default path", keys: map[string]string{"WORK_KEY": "w", "GEMINI_API_KEY": "g", "KIMI_API_KEY": "k"}, file: cfg,
			want:    []string{"Configuration: XDG/kosong-host/config.yaml\n", "GEMINI_API_KEY set", "KIMI_API_KEY set", "set (WORK_KEY)", "set (GEMINI_API_KEY)"},
			notWant: []string{"missing: WORK_KEY", "missing: KIMI"}},
		{name: "no file", want: []string{"Configuration: XDG/kosong-host/config.yaml (not found)", "Model aliases:\n  none", "Configured providers:\n  none", "KIMI_API_KEY missing"}},
		{name: "bad file", file: "providers:\n  p:\n    kind: kimi\n", code: 2,
			want: []string{`config XDG/kosong-host/config.yaml: line 3: unknown key "kind" in providers.p`}},
		{name: "missing --config", args: []string{"--config", "/nonexistent/c.yaml"}, code: 2, want: []string{"config /nonexistent/c.yaml: file not found"}},
		{name: "arguments", args: []string{"extra"}, code: -1, want: []string{"unknown command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := modelsEnv(t, tt.keys)
			cfgPath := filepath.Join(t.TempDir(), "models.yaml")
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				if err := os.MkdirAll(filepath.Join(xdg, "kosong-host"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(xdg, "kosong-host", "config.yaml"), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "CFG", cfgPath))
			}
			out, err := runModels(t, args...)
			text := out
			if err != nil {
				text += err.Error()
			}
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("models: %v\n%s", err, out)
			case tt.code > 0:
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != tt.code {
					t.Fatalf("error %v, want exit code %d", err, tt.code)
				}
			case tt.code < 0 && err == nil:
				t.Fatal("models succeeded")
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(strings.ReplaceAll(w, "CFG", cfgPath), "XDG", xdg)
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("output has %q:\n%s", w, text)
				}
			}
		})
	}
}
