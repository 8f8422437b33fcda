package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/registry"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opts    registry.Options
		env     map[string]string
		dotenv  string
		script  bool   // write script.yaml in WorkDir
		want    string // provider name
		model   string
		baseURL string
		apiKey  string // APIKeyEnv of an openaicompat provider
	}{
		{name: "kimi picked first", env: map[string]string{"KIMI_API_KEY": "k", "OPENAI_API_KEY": "o"},
			want: "kimi", model: "kimi-k2-turbo-preview", baseURL: "https://api.moonshot.ai/v1", apiKey: "KIMI_API_KEY"},
		{name: "openai when only its key is set", env: map[string]string{"OPENAI_API_KEY": "o"},
			want: "openai", model: "gpt-5", baseURL: "https://api.openai.com/v1", apiKey: "OPENAI_API_KEY"},
		{name: "key from .env", dotenv: "KIMI_API_KEY=from-file\n", want: "kimi", model: "kimi-k2-turbo-preview"},
		{name: "explicit openai over kimi", opts: registry.Options{Provider: "OpenAI"}, env: map[string]string{"KIMI_API_KEY": "k", "OPENAI_API_KEY": "o"},
			want: "openai", model: "gpt-5"},
		{name: "env overrides defaults", opts: registry.Options{Provider: "kimi"},
			env:  map[string]string{"KIMI_API_KEY": "k", "KIMI_MODEL_NAME": "kimi-env", "KIMI_BASE_URL": "http://env.example/v1"},
			want: "kimi", model: "kimi-env", baseURL: "http://env.example/v1"},
		{name: "options override env", opts: registry.Options{Model: "flag-model", BaseURL: "http://flag.example/v1"},
			env:  map[string]string{"OPENAI_API_KEY": "o", "OPENAI_MODEL_NAME": "env-model", "OPENAI_BASE_URL": "http://env.example/v1"},
			want: "openai", model: "flag-model", baseURL: "http://flag.example/v1"},
		{name: "environment wins over .env", env: map[string]string{"KIMI_API_KEY": "k", "KIMI_MODEL_NAME": "from-env"},
			dotenv: "KIMI_MODEL_NAME=from-file\nKIMI_BASE_URL=http://file.example/v1\n",
			want:   "kimi", model: "from-env", baseURL: "http://file.example/v1"},
		{name: "scripted", opts: registry.Options{Provider: "scripted", Script: "script.yaml"}, script: true,
			want: "scripted", model: "script:script.yaml"},
		{name: "script alone means scripted", opts: registry.Options{Script: "script.yaml"}, script: true,
			env: map[string]string{"KIMI_API_KEY": "k"}, want: "scripted", model: "script:script.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.dotenv != "" {
				write(t, filepath.Join(dir, ".env"), tt.dotenv)
			}
			if tt.script {
				write(t, filepath.Join(dir, "script.yaml"), "turns:\n  - text: hi\n")
			}
			opts := tt.opts
			opts.WorkDir = dir
			opts.Getenv = envOf(tt.env)
			p, err := registry.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.want || p.Model() != tt.model {
				t.Errorf("got %s/%s, want %s/%s", p.Name(), p.Model(), tt.want, tt.model)
			}
			if oc, ok := p.(*openaicompat.Provider); ok {
				if tt.baseURL != "" && oc.BaseURL() != tt.baseURL {
					t.Errorf("base URL %q, want %q", oc.BaseURL(), tt.baseURL)
				}
				if tt.apiKey != "" && oc.APIKeyEnv() != tt.apiKey {
					t.Errorf("APIKeyEnv %q, want %q", oc.APIKeyEnv(), tt.apiKey)
				}
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		opts   registry.Options
		env    map[string]string
		dotenv string
		want   string
	}{
		{name: "nothing configured", want: "no provider configured: set KIMI_API_KEY or OPENAI_API_KEY, or use --provider scripted --script FILE"},
		{name: "kimi without key", opts: registry.Options{Provider: "kimi"}, env: map[string]string{"OPENAI_API_KEY": "o"},
			want: "KIMI_API_KEY is not set (provider kimi)"},
		{name: "openai without key", opts: registry.Options{Provider: "openai"}, want: "OPENAI_API_KEY is not set (provider openai)"},
		{name: "scripted without script", opts: registry.Options{Provider: "scripted"}, want: "--script"},
		{name: "missing script file", opts: registry.Options{Provider: "scripted", Script: "nope.yaml"}, want: "nope.yaml: file not found"},
		{name: "unknown provider", opts: registry.Options{Provider: "anthropic"}, want: `unknown provider "anthropic" (known: kimi, openai, scripted)`},
		{name: "script with another provider", opts: registry.Options{Provider: "kimi", Script: "s.yaml"}, env: map[string]string{"KIMI_API_KEY": "k"},
			want: "--script only applies to --provider scripted"},
		{name: "bad base URL", opts: registry.Options{BaseURL: "not a url"}, env: map[string]string{"KIMI_API_KEY": "k"}, want: "not an http(s) URL"},
		{name: "unreadable .env", dotenv: "KIMI_API_KEY='unterminated\n", want: ".env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.dotenv != "" {
				write(t, filepath.Join(dir, ".env"), tt.dotenv)
			}
			opts := tt.opts
			opts.WorkDir = dir
			opts.Getenv = envOf(tt.env)
			p, err := registry.New(opts)
			var ce *registry.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New = %v, %v; want a *ConfigError", p, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestDefaultGetenvAndWorkDir(t *testing.T) {
	t.Setenv("KIMI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "from-os")
	t.Chdir(t.TempDir())
	p, err := registry.New(registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "openai" {
		t.Errorf("provider %s, want openai", p.Name())
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
