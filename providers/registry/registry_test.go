package registry_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/openaitest"
	"github.com/kosong-host/kosong-host/providers/registry"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// info is what a test can see of a built provider.
type info interface {
	BaseURL() string
	APIKeyEnv() string
}

const configFile = `
default_model: sonnet
providers:
  work:
    type: anthropic
    api_key_env: WORK_KEY
  filekey:
    type: anthropic
    base_url: https://claude.example.com
    api_key: from-file
  gem:
    type: google
    api_key: g-file
  local:
    type: openai-compatible
    base_url: http://localhost:8080/v1
  kimi:
    type: kimi
    base_url: https://kimi.example.com/v1
models:
  sonnet:
    provider: work
    model: claude-sonnet-4-5
    max_context_size: 200000
    capabilities: [thinking]
  small:
    provider: filekey
    model: claude-haiku
    max_tokens: 4096
    capabilities: [thinking]
  flash:
    provider: gem
    model: gemini-2.5-flash
  qwen:
    provider: local
    model: qwen3
  gpt:
    provider: openai
    model: gpt-5-mini
`

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		opts     registry.Options
		env      map[string]string
		dotenv   string
		script   bool // write script.yaml in WorkDir
		config   bool // write configFile as config.yaml and pass it
		want     string
		model    string
		baseURL  string
		keyFrom  string // APIKeyEnv of the provider
		alias    string
		context  int
		thinking int64 // anthropic thinking budget
		noAlias  bool  // check that no alias was used
	}{
		{name: "kimi picked first", env: map[string]string{"KIMI_API_KEY": "k", "OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"},
			want: "kimi", model: "kimi-k2-turbo-preview", baseURL: "https://api.moonshot.ai/v1", keyFrom: "KIMI_API_KEY"},
		{name: "openai when only its key is set", env: map[string]string{"OPENAI_API_KEY": "o", "GOOGLE_API_KEY": "g"},
			want: "openai", model: "gpt-5", baseURL: "https://api.openai.com/v1", keyFrom: "OPENAI_API_KEY"},
		{name: "anthropic when only its key is set", env: map[string]string{"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"},
			want: "anthropic", model: "claude-sonnet-4-5", baseURL: "https://api.anthropic.com", keyFrom: "ANTHROPIC_API_KEY"},
		{name: "anthropic with a bearer token", env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"},
			want: "anthropic", model: "claude-sonnet-4-5", keyFrom: "ANTHROPIC_AUTH_TOKEN"},
		{name: "ANTHROPIC_API_KEY before ANTHROPIC_AUTH_TOKEN", opts: registry.Options{Provider: "anthropic"}, env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "t", "ANTHROPIC_API_KEY": "a"},
			want: "anthropic", keyFrom: "ANTHROPIC_API_KEY"},
		{name: "google with GEMINI_API_KEY", env: map[string]string{"GEMINI_API_KEY": "g"},
			want: "google", model: "gemini-3-pro-preview", baseURL: "https://generativelanguage.googleapis.com", keyFrom: "GEMINI_API_KEY"},
		{name: "GOOGLE_API_KEY before GEMINI_API_KEY", opts: registry.Options{Provider: "google"}, env: map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "g2"},
			want: "google", keyFrom: "GOOGLE_API_KEY"},
		{name: "key from .env", dotenv: "KIMI_API_KEY=from-file\n", want: "kimi", model: "kimi-k2-turbo-preview"},
		{name: "explicit openai over kimi", opts: registry.Options{Provider: "OpenAI"}, env: map[string]string{"KIMI_API_KEY": "k", "OPENAI_API_KEY": "o"},
			want: "openai", model: "gpt-5"},
		{name: "env overrides defaults", opts: registry.Options{Provider: "kimi"},
			env:  map[string]string{"KIMI_API_KEY": "k", "KIMI_MODEL_NAME": "kimi-env", "KIMI_BASE_URL": "http://env.example/v1"},
			want: "kimi", model: "kimi-env", baseURL: "http://env.example/v1"},
		{name: "anthropic env", opts: registry.Options{Provider: "anthropic"},
			env:  map[string]string{"ANTHROPIC_API_KEY": "a", "ANTHROPIC_MODEL_NAME": "claude-opus", "ANTHROPIC_BASE_URL": "http://proxy.example"},
			want: "anthropic", model: "claude-opus", baseURL: "http://proxy.example"},
		{name: "google env", opts: registry.Options{Provider: "google"},
			env:  map[string]string{"GOOGLE_API_KEY": "g", "GOOGLE_MODEL_NAME": "gemini-2.5-pro", "GOOGLE_BASE_URL": "http://proxy.example"},
			want: "google", model: "gemini-2.5-pro", baseURL: "http://proxy.example"},
		{name: "options override env", opts: registry.Options{Model: "openai/flag-model", BaseURL: "http://flag.example/v1"},
			env:  map[string]string{"OPENAI_API_KEY": "o", "OPENAI_MODEL_NAME": "env-model", "OPENAI_BASE_URL": "http://env.example/v1"},
			want: "openai", model: "flag-model", baseURL: "http://flag.example/v1"},
		{name: "environment wins over .env", env: map[string]string{"KIMI_API_KEY": "k", "KIMI_MODEL_NAME": "from-env"},
			dotenv: "KIMI_MODEL_NAME=from-file\nKIMI_API_KEY=file-key\nKIMI_BASE_URL=http://file.example/v1\n",
			want:   "kimi", model: "from-env", baseURL: "https://api.moonshot.ai/v1"},
		{name: "scripted", opts: registry.Options{Provider: "scripted", Script: "script.yaml"}, script: true,
			want: "scripted", model: "script:script.yaml"},
		{name: "script alone means scripted", opts: registry.Options{Script: "script.yaml"}, script: true,
			env: map[string]string{"KIMI_API_KEY": "k"}, want: "scripted", model: "script:script.yaml"},
		{name: "agent model names a provider (older agents)", opts: registry.Options{ModelAlias: "openai"}, env: map[string]string{"KIMI_API_KEY": "k", "OPENAI_API_KEY": "o"},
			want: "openai", model: "gpt-5"},

		// With the configuration file.
		{name: "default_model", config: true, env: map[string]string{"WORK_KEY": "w", "KIMI_API_KEY": "k"},
			want: "work", model: "claude-sonnet-4-5", baseURL: "https://api.anthropic.com", keyFrom: "WORK_KEY", alias: "sonnet", context: 200000, thinking: 25000},
		{name: "--model alias", config: true, opts: registry.Options{Model: "small"}, env: map[string]string{},
			want: "filekey", model: "claude-haiku", baseURL: "https://claude.example.com", alias: "small", thinking: 2048,
			keyFrom: "api_key of provider filekey in CONFIG"},
		{name: "--model alias with its provider", config: true, opts: registry.Options{Model: "small", Provider: "filekey"},
			want: "filekey", model: "claude-haiku", alias: "small", thinking: 2048},
		{name: "agent model alias", config: true, opts: registry.Options{ModelAlias: "flash"}, env: map[string]string{},
			want: "gem", model: "gemini-2.5-flash", baseURL: "https://generativelanguage.googleapis.com", alias: "flash"},
		{name: "--model wins over the agent's alias", config: true, opts: registry.Options{Model: "qwen", ModelAlias: "flash"},
			want: "local", model: "qwen3", baseURL: "http://localhost:8080/v1", alias: "qwen"},
		{name: "ANTHROPIC_API_KEY overrides api_key", config: true, opts: registry.Options{Model: "small"}, env: map[string]string{"ANTHROPIC_API_KEY": "a"},
			want: "filekey", keyFrom: "ANTHROPIC_API_KEY"},
		{name: "api_key_env is not overridden", config: true, opts: registry.Options{Model: "sonnet"}, env: map[string]string{"ANTHROPIC_API_KEY": "a", "WORK_KEY": "w"},
			want: "work", keyFrom: "WORK_KEY"},
		{name: "env base URL overrides the file's", config: true, opts: registry.Options{Model: "small"}, env: map[string]string{"ANTHROPIC_BASE_URL": "http://env.example"},
			want: "filekey", baseURL: "http://env.example"},
		{name: "--base-url overrides all", config: true, opts: registry.Options{Model: "small", BaseURL: "http://flag.example"}, env: map[string]string{"ANTHROPIC_BASE_URL": "http://env.example"},
			want: "filekey", baseURL: "http://flag.example"},
		{name: "alias's model is not overridden by the env", config: true, opts: registry.Options{Model: "flash"}, env: map[string]string{"GOOGLE_MODEL_NAME": "other"},
			want: "gem", model: "gemini-2.5-flash"},
		{name: "PROVIDER/MODEL names a provider's model", config: true, opts: registry.Options{Model: "work/claude-opus-4-1"}, env: map[string]string{"WORK_KEY": "w"},
			want: "work", model: "claude-opus-4-1", noAlias: true},
		{name: "PROVIDER/MODEL of a built-in", opts: registry.Options{Model: "openai/gpt-4o"}, env: map[string]string{"OPENAI_API_KEY": "o", "KIMI_API_KEY": "k"},
			want: "openai", model: "gpt-4o"},
		{name: "a slash in a model name of --provider", config: true, opts: registry.Options{Provider: "local", Model: "qwen/qwen3"},
			want: "local", model: "qwen/qwen3"},
		{name: "the model of an alias is that alias", config: true, opts: registry.Options{Model: "gemini-2.5-flash"}, env: map[string]string{"GOOGLE_API_KEY": "g"},
			want: "gem", model: "gemini-2.5-flash", alias: "flash"},
		{name: "a built-in's default model", opts: registry.Options{Model: "gpt-5"}, env: map[string]string{"OPENAI_API_KEY": "o", "KIMI_API_KEY": "k"},
			want: "openai", model: "gpt-5"},
		{name: "configured provider replaces a built-in", config: true, opts: registry.Options{Provider: "kimi"}, env: map[string]string{"KIMI_API_KEY": "k"},
			want: "kimi", model: "kimi-k2-turbo-preview", baseURL: "https://kimi.example.com/v1"},
		{name: "built-in provider of an alias", config: true, opts: registry.Options{Model: "gpt"}, env: map[string]string{"OPENAI_API_KEY": "o"},
			want: "openai", model: "gpt-5-mini", baseURL: "https://api.openai.com/v1", alias: "gpt"},
		{name: "openai-compatible with --model", config: true, opts: registry.Options{Provider: "local", Model: "llama"},
			want: "local", model: "llama", keyFrom: "api_key or api_key_env of provider local in CONFIG"},
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
			cfgPath := filepath.Join(dir, "config.yaml")
			if tt.config {
				write(t, cfgPath, configFile)
				opts.ConfigPath = cfgPath
			}
			sel, err := registry.Select(opts)
			if err != nil {
				t.Fatal(err)
			}
			p := sel.Provider
			if p.Name() != tt.want || tt.model != "" && p.Model() != tt.model {
				t.Errorf("got %s/%s, want %s/%s", p.Name(), p.Model(), tt.want, tt.model)
			}
			if (tt.alias != "" || tt.noAlias) && (sel.Alias != tt.alias || sel.MaxContextSize != tt.context) {
				t.Errorf("alias %q context %d, want %q %d", sel.Alias, sel.MaxContextSize, tt.alias, tt.context)
			}
			if in, ok := p.(info); ok {
				if tt.baseURL != "" && in.BaseURL() != tt.baseURL {
					t.Errorf("base URL %q, want %q", in.BaseURL(), tt.baseURL)
				}
				if want := strings.ReplaceAll(tt.keyFrom, "CONFIG", cfgPath); want != "" && in.APIKeyEnv() != want {
					t.Errorf("APIKeyEnv %q, want %q", in.APIKeyEnv(), want)
				}
			} else if tt.want != "scripted" {
				t.Errorf("%T has no BaseURL/APIKeyEnv", p)
			}
			if a, ok := p.(*anthropic.Provider); ok && (tt.alias != "" || tt.noAlias) && a.ThinkingBudget() != tt.thinking {
				t.Errorf("thinking budget %d, want %d", a.ThinkingBudget(), tt.thinking)
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
		config string // written as config.yaml and passed when set
		want   string
	}{
		{name: "nothing configured", want: "no provider configured: set KIMI_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_API_KEY, define a model alias in a configuration file, or use --provider scripted --script FILE"},
		{name: "nothing configured, default config path", env: map[string]string{"HOME": "/nonexistent-home"},
			want: "define default_model in /nonexistent-home/.config/kosong-host/config.yaml"},
		{name: "kimi without key", opts: registry.Options{Provider: "kimi"}, env: map[string]string{"OPENAI_API_KEY": "o"},
			want: "KIMI_API_KEY is not set (provider kimi)"},
		{name: "openai without key", opts: registry.Options{Provider: "openai"}, want: "OPENAI_API_KEY is not set (provider openai)"},
		{name: "anthropic without key", opts: registry.Options{Provider: "anthropic"}, want: "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set (provider anthropic)"},
		{name: "google without key", opts: registry.Options{Provider: "google"}, want: "GOOGLE_API_KEY (or GEMINI_API_KEY) is not set (provider google)"},
		{name: "scripted without script", opts: registry.Options{Provider: "scripted"}, want: "--script"},
		{name: "agent model scripted without script", opts: registry.Options{ModelAlias: "scripted"}, want: "--script"},
		{name: "missing script file", opts: registry.Options{Provider: "scripted", Script: "nope.yaml"}, want: "nope.yaml: file not found"},
		{name: "unknown provider", opts: registry.Options{Provider: "nope"}, want: `unknown provider "nope" (known: kimi, openai, anthropic, google, scripted)`},
		{name: "script with another provider", opts: registry.Options{Provider: "kimi", Script: "s.yaml"}, env: map[string]string{"KIMI_API_KEY": "k"},
			want: "--script only applies to --provider scripted"},
		{name: "bad base URL", opts: registry.Options{BaseURL: "not a url"}, env: map[string]string{"KIMI_API_KEY": "k"}, want: "not an http(s) URL"},
		{name: "bad anthropic base URL", opts: registry.Options{Provider: "anthropic", BaseURL: "nope"}, env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "not an http(s) URL"},
		{name: "unreadable .env", dotenv: "KIMI_API_KEY='unterminated\n", want: ".env"},
		{name: "missing --config file", opts: registry.Options{ConfigPath: "/nonexistent/kosong.yaml"}, want: "config /nonexistent/kosong.yaml: file not found"},
		{name: "bad config file", config: "providers:\n  p:\n    typ: kimi\n", want: `line 3: unknown key "typ" in providers.p`},
		{name: "api_key_env not set", config: configFile, want: "WORK_KEY is not set (provider work)"},
		{name: "unknown agent model", config: configFile, opts: registry.Options{ModelAlias: "opus"},
			want: `model "opus" is not a model alias (aliases in CONFIG: flash, gpt, qwen, small, sonnet) nor a provider (filekey, gem, kimi, local, work, openai, anthropic, google, scripted)`},
		{name: "alias of another provider", config: configFile, opts: registry.Options{Model: "small", Provider: "work"},
			want: "--model small is an alias of provider filekey, not of work"},
		{name: "unknown plain model", config: configFile, opts: registry.Options{Model: "nope"}, env: map[string]string{"WORK_KEY": "w"},
			want: `model "nope" is not a model alias (aliases in CONFIG: flash, gpt, qwen, small, sonnet) nor a known model: name a provider's model as PROVIDER/MODEL`},
		{name: "unknown plain model, no file", opts: registry.Options{Model: "claude-opus-4-1"}, env: map[string]string{"ANTHROPIC_API_KEY": "a"},
			want: `model "claude-opus-4-1" is not a model alias (no configuration file) nor a known model`},
		{name: "openai-compatible without model", config: configFile, opts: registry.Options{Provider: "local"},
			want: "provider local has no default model: use --model NAME or a model alias"},
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
			cfgPath := filepath.Join(dir, "config.yaml")
			if tt.config != "" {
				write(t, cfgPath, tt.config)
				opts.ConfigPath = cfgPath
			}
			p, err := registry.New(opts)
			var ce *registry.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New = %v, %v; want a *ConfigError", p, err)
			}
			if first := strings.HasPrefix(tt.name, "nothing configured"); ce.NoProvider != first {
				t.Errorf("NoProvider %v, want %v", ce.NoProvider, first)
			}
			if want := strings.ReplaceAll(tt.want, "CONFIG", cfgPath); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}

func TestDefaultGetenvAndWorkDir(t *testing.T) {
	t.Setenv("KIMI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "from-os")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	p, err := registry.New(registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "openai" {
		t.Errorf("provider %s, want openai", p.Name())
	}
}

// The default configuration file is read from $XDG_CONFIG_HOME.
func TestDefaultConfigPath(t *testing.T) {
	xdg := t.TempDir()
	write(t, filepath.Join(xdg, "kosong-host", "config.yaml"), "models:\n  k:\n    provider: kimi\n    model: kimi-latest\ndefault_model: k\n")
	sel, err := registry.Select(registry.Options{WorkDir: t.TempDir(), Getenv: envOf(map[string]string{"XDG_CONFIG_HOME": xdg, "KIMI_API_KEY": "k"})})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Provider.Model() != "kimi-latest" || sel.Alias != "k" || sel.ConfigPath != filepath.Join(xdg, "kosong-host", "config.yaml") {
		t.Errorf("selection %+v model %s", sel, sel.Provider.Model())
	}
}

// What the providers built from a configuration send: keys from the right
// place, configured headers.
func TestConfiguredProvidersSend(t *testing.T) {
	oai := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}})
	ant := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	gem := googletest.NewServer(t, googletest.Response{Text: []string{"ok"}})
	cfg := `
providers:
  oai:
    type: openai-compatible
    base_url: ` + oai.BaseURL() + `
    api_key: sk-oai
    headers: {X-Team: blue}
  ant:
    type: anthropic
    base_url: ` + ant.BaseURL() + `
    api_key: sk-file
    headers: {X-Team: red}
  gem:
    type: google
    base_url: ` + gem.BaseURL() + `
    api_key_env: MY_GEMINI
    headers: {X-Team: green}
models:
  o: {provider: oai, model: m-o}
  a: {provider: ant, model: m-a, capabilities: [thinking]}
  g: {provider: gem, model: gemini-3-flash}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	write(t, path, cfg)
	env := envOf(map[string]string{"ANTHROPIC_API_KEY": "sk-env", "MY_GEMINI": "g-env", "GOOGLE_API_KEY": "ignored"})
	for _, alias := range []string{"o", "a", "g"} {
		p, err := registry.New(registry.Options{Model: alias, ConfigPath: path, WorkDir: dir, Getenv: env})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Stream(context.Background(), providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := s.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	o := oai.LastRequest(t)
	if o.Header.Get("Authorization") != "Bearer sk-oai" || o.Header.Get("X-Team") != "blue" || o.Chat.Model != "m-o" {
		t.Errorf("openai-compatible request %v %s", o.Header, o.Chat.Model)
	}
	a := ant.LastRequest(t)
	if a.Header.Get("Authorization") != "Bearer sk-env" || a.Header.Get("X-Team") != "red" || a.Messages.Model != "m-a" || !strings.Contains(string(a.Messages.Thinking), `"budget_tokens":25000`) {
		t.Errorf("anthropic request %v %s %s", a.Header, a.Messages.Model, a.Messages.Thinking)
	}
	g := gem.LastRequest(t)
	if g.Header.Get("X-Goog-Api-Key") != "g-env" || g.Header.Get("X-Team") != "green" || g.Model != "gemini-3-flash" {
		t.Errorf("google request %v %s", g.Header, g.Model)
	}
}

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	write(t, path, configFile)
	ov, err := registry.Describe(registry.Options{ConfigPath: path, WorkDir: dir,
		Getenv: envOf(map[string]string{"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g"})})
	if err != nil {
		t.Fatal(err)
	}
	if ov.ConfigPath != path || !ov.ConfigFound || ov.DefaultModel != "sonnet" || len(ov.Providers) != 5 || len(ov.Models) != 5 || len(ov.Builtins) != 4 {
		t.Fatalf("overview %+v", ov)
	}
	prov := map[string]registry.ProviderStatus{}
	for _, p := range ov.Providers {
		prov[p.Name] = p
	}
	if prov["work"].Missing != "WORK_KEY is not set (provider work)" || prov["filekey"].KeyFrom != "ANTHROPIC_API_KEY" ||
		prov["gem"].KeyFrom != "GEMINI_API_KEY" || prov["kimi"].Missing != "KIMI_API_KEY is not set (provider kimi)" || prov["local"].Missing != "" {
		t.Errorf("providers %+v", ov.Providers)
	}
	models := map[string]registry.ModelStatus{}
	for _, m := range ov.Models {
		models[m.Entry.Alias] = m
	}
	if !models["sonnet"].Default || models["sonnet"].Missing == "" || models["small"].Missing != "" || models["gpt"].Missing != "OPENAI_API_KEY is not set (provider openai)" {
		t.Errorf("models %+v", ov.Models)
	}
	for _, b := range ov.Builtins {
		wantSet := map[string]string{"anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}[b.Name]
		if b.KeySet != wantSet || b.Configured != (b.Name == "kimi") {
			t.Errorf("builtin %+v", b)
		}
	}

	ov, err = registry.Describe(registry.Options{WorkDir: dir, Getenv: envOf(map[string]string{"HOME": dir})})
	if err != nil || ov.ConfigFound || ov.ConfigPath != filepath.Join(dir, ".config", "kosong-host", "config.yaml") || len(ov.Models) != 0 {
		t.Errorf("without a file: %+v %v", ov, err)
	}
	if _, err := registry.Describe(registry.Options{ConfigPath: filepath.Join(dir, "none.yaml"), WorkDir: dir, Getenv: envOf(nil)}); err == nil {
		t.Error("Describe of a missing --config succeeded")
	}
}

func TestKnown(t *testing.T) {
	if got := strings.Join(registry.Known(), ","); got != "kimi,openai,anthropic,google,scripted" {
		t.Errorf("Known = %s", got)
	}
	if b, ok := registry.LookupBuiltin("google"); !ok || b.KeyVars() != "GOOGLE_API_KEY (or GEMINI_API_KEY)" || b.Model != google.DefaultModel {
		t.Errorf("google builtin %+v", b)
	}
	if _, ok := registry.LookupBuiltin("openai-compatible"); ok {
		t.Error("openai-compatible is no built-in provider")
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTimeoutsPrecedence(t *testing.T) {
	cfg := `
providers:
  slow:
    type: openai-compatible
    base_url: http://localhost:8080/v1
    connect_timeout: 30s
    stream_idle_timeout: 10m
models:
  patient: {provider: slow, model: m, stream_idle_timeout: 20m}
  plain: {provider: slow, model: m}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	write(t, path, cfg)
	tests := []struct {
		name string
		opts registry.Options
		want timeouts.Timeouts
	}{
		{"built-in provider: the defaults", registry.Options{Provider: "openai"},
			timeouts.Timeouts{Connect: timeouts.DefaultConnect, StreamIdle: timeouts.DefaultStreamIdle}},
		{"the provider's", registry.Options{Model: "plain"}, timeouts.Timeouts{Connect: 30 * time.Second, StreamIdle: 10 * time.Minute}},
		{"the alias's over the provider's", registry.Options{Model: "patient"}, timeouts.Timeouts{Connect: 30 * time.Second, StreamIdle: 20 * time.Minute}},
		{"the flag over both", registry.Options{Model: "patient", StreamIdleTimeout: 2 * time.Second},
			timeouts.Timeouts{Connect: 30 * time.Second, StreamIdle: 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.ConfigPath, tt.opts.WorkDir, tt.opts.Getenv = path, dir, envOf(map[string]string{"OPENAI_API_KEY": "k"})
			sel, err := registry.Select(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Timeouts != tt.want {
				t.Errorf("timeouts %+v, want %+v", sel.Timeouts, tt.want)
			}
		})
	}
}

func TestThinkingBudget(t *testing.T) {
	for _, tt := range []struct{ maxTokens, want int64 }{
		{0, 25000}, {4096, 2048}, {200000, anthropic.DefaultThinkingBudget}, {2000, 0},
	} {
		if got := anthropic.ThinkingBudget(tt.maxTokens); got != tt.want {
			t.Errorf("ThinkingBudget(%d) = %d, want %d", tt.maxTokens, got, tt.want)
		}
	}
}
