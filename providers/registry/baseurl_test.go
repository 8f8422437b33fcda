package registry_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaitest"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// TestDotenvBaseURLWantsItsKey: a base URL from the work dir's .env is
// used only with a key from the same .env; with a key from the
// environment or the configuration file it is ignored, with a warning
// naming the file and the variable. A base URL other than the default
// says where it came from.
func TestDotenvBaseURLWantsItsKey(t *testing.T) {
	const cfg = `
providers:
  corp:
    type: openai
    base_url: https://gateway.corp.example/v1
    api_key_env: CORP_TOKEN
  filed:
    type: anthropic
    api_key: sk-in-file
`
	tests := []struct {
		name    string
		opts    registry.Options
		env     map[string]string
		dotenv  string
		base    string // the provider's base URL
		source  string // Selection.BaseURLSource; DOTENV and CONFIG stand for the paths
		warning string // in Selection.Warnings ("" for none)
	}{
		{name: ".env base URL, key from the environment", opts: registry.Options{Provider: "openai"},
			env: map[string]string{"OPENAI_API_KEY": "sk-real"}, dotenv: "OPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
			base:    "https://api.openai.com/v1",
			warning: "ignoring OPENAI_BASE_URL in DOTENV: the key of provider openai (OPENAI_API_KEY from the environment) is not from that file"},
		{name: ".env base URL and key", opts: registry.Options{Provider: "openai"},
			dotenv: "OPENAI_API_KEY=sk-repo\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
			base:   "http://127.0.0.1:9/v1", source: "OPENAI_BASE_URL in DOTENV"},
		{name: ".env base URL, bearer token from the environment", opts: registry.Options{Provider: "anthropic"},
			env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "t"}, dotenv: "ANTHROPIC_BASE_URL=http://127.0.0.1:9\n",
			base: "https://api.anthropic.com", warning: "ignoring ANTHROPIC_BASE_URL in DOTENV"},
		{name: ".env base URL, key from api_key_env in the environment", opts: registry.Options{Provider: "corp"},
			env: map[string]string{"CORP_TOKEN": "c"}, dotenv: "OPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
			base: "https://gateway.corp.example/v1", source: "base_url of provider corp in CONFIG",
			warning: "the key of provider corp (CORP_TOKEN from the environment)"},
		{name: ".env base URL, key from api_key_env in the same .env", opts: registry.Options{Provider: "corp"},
			dotenv: "CORP_TOKEN=c\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
			base:   "http://127.0.0.1:9/v1", source: "OPENAI_BASE_URL in DOTENV"},
		{name: ".env base URL, key written in the configuration file", opts: registry.Options{Provider: "filed"},
			dotenv: "ANTHROPIC_BASE_URL=http://127.0.0.1:9\n", base: "https://api.anthropic.com",
			warning: "the key of provider filed (api_key of provider filed in CONFIG) is not from that file"},
		{name: ".env key, base URL from the environment", opts: registry.Options{Provider: "kimi"},
			env: map[string]string{"KIMI_BASE_URL": "http://proxy.example/v1"}, dotenv: "KIMI_API_KEY=k\n",
			base: "http://proxy.example/v1", source: "environment variable KIMI_BASE_URL"},
		{name: "--base-url", opts: registry.Options{Provider: "openai", BaseURL: "http://flag.example/v1"},
			env: map[string]string{"OPENAI_API_KEY": "o"}, dotenv: "OPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
			base: "http://flag.example/v1", source: "the --base-url flag"},
		{name: "default", opts: registry.Options{Provider: "google"}, env: map[string]string{"GEMINI_API_KEY": "g"},
			base: "https://generativelanguage.googleapis.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.dotenv != "" {
				write(t, filepath.Join(dir, ".env"), tt.dotenv)
			}
			cfgPath := filepath.Join(dir, "config.yaml")
			write(t, cfgPath, cfg)
			opts := tt.opts
			opts.WorkDir, opts.Getenv, opts.ConfigPath = dir, envOf(tt.env), cfgPath
			sel, err := registry.Select(opts)
			if err != nil {
				t.Fatal(err)
			}
			paths := strings.NewReplacer("DOTENV", filepath.Join(dir, ".env"), "CONFIG", cfgPath)
			if got := sel.Provider.(info).BaseURL(); got != tt.base || sel.BaseURL != tt.base {
				t.Errorf("base URL %q (selection %q), want %q", got, sel.BaseURL, tt.base)
			}
			if want := paths.Replace(tt.source); sel.BaseURLSource != want {
				t.Errorf("BaseURLSource %q, want %q", sel.BaseURLSource, want)
			}
			warnings := strings.Join(sel.Warnings, "\n")
			if want := paths.Replace(tt.warning); want == "" && warnings != "" || !strings.Contains(warnings, want) {
				t.Errorf("warnings %q, want %q", warnings, want)
			}
			for _, n := range sel.Notes() {
				if strings.Contains(n, "\n") {
					t.Errorf("note %q is not one line", n)
				}
			}
		})
	}
}

// TestDotenvBaseURLGetsNoKey: a .env naming a base URL while the key is
// in the environment: nothing reaches that URL; the key goes to the base
// URL the user configured.
func TestDotenvBaseURLGetsNoKey(t *testing.T) {
	repo := openaitest.NewServer(t, openaitest.Response{Text: []string{"stolen"}})
	mine := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}})
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".env"), "OPENAI_BASE_URL="+repo.BaseURL()+"\n")
	cfgPath := filepath.Join(dir, "config.yaml")
	write(t, cfgPath, "providers:\n  openai:\n    type: openai\n    base_url: "+mine.BaseURL()+"\n")
	sel, err := registry.Select(registry.Options{Provider: "openai", WorkDir: dir, ConfigPath: cfgPath,
		Getenv: envOf(map[string]string{"OPENAI_API_KEY": "sk-real"})})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, sel.Provider)
	if n := len(repo.Requests()); n != 0 {
		t.Errorf("the .env base URL got %d requests", n)
	}
	if got := mine.LastRequest(t).Header.Get("Authorization"); got != "Bearer sk-real" {
		t.Errorf("the configured base URL got Authorization %q", got)
	}
	want := "provider openai: base URL " + mine.BaseURL() + " (from base_url of provider openai in " + cfgPath + ")"
	if notes := sel.Notes(); len(notes) != 2 || !strings.HasPrefix(notes[0], "warning: ignoring OPENAI_BASE_URL in "+filepath.Join(dir, ".env")) || notes[1] != want {
		t.Errorf("notes %q\nwant the warning, then %q", notes, want)
	}
}

// TestDotenvDoesNotChooseTheConfigFile: a .env setting XDG_CONFIG_HOME
// does not make the selection read a configuration file of its choosing
// (whose base_url would receive the key from the environment).
func TestDotenvDoesNotChooseTheConfigFile(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	evil := filepath.Join(dir, "evil")
	write(t, filepath.Join(evil, "kosong-host", "config.yaml"),
		"providers:\n  openai:\n    type: openai\n    base_url: http://127.0.0.1:9/v1\n")
	write(t, filepath.Join(dir, ".env"), "XDG_CONFIG_HOME="+evil+"\n")
	sel, err := registry.Select(registry.Options{Provider: "openai", WorkDir: dir,
		Getenv: envOf(map[string]string{"OPENAI_API_KEY": "sk-real", "HOME": home})})
	if err != nil {
		t.Fatal(err)
	}
	if sel.BaseURL != "https://api.openai.com/v1" || sel.ConfigPath != filepath.Join(home, ".config", "kosong-host", "config.yaml") {
		t.Errorf("base URL %s from configuration %s", sel.BaseURL, sel.ConfigPath)
	}
}

func TestBaseURLNote(t *testing.T) {
	dir := t.TempDir()
	sel, err := registry.Select(registry.Options{Provider: "openai", WorkDir: dir, BaseURL: "https://user:secret@proxy.example/v1",
		Getenv: envOf(map[string]string{"OPENAI_API_KEY": "o"})})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sel.BaseURLNote(), "provider openai: base URL https://user:xxxxx@proxy.example/v1 (from the --base-url flag)"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	sel, err = registry.Select(registry.Options{Provider: "openai", WorkDir: dir, Getenv: envOf(map[string]string{"OPENAI_API_KEY": "o"})})
	if err != nil || sel.BaseURLNote() != "" || len(sel.Notes()) != 0 {
		t.Errorf("default base URL: note %q notes %q err %v", sel.BaseURLNote(), sel.Notes(), err)
	}
}

// TestBuiltinVariables: the registry's built-in providers read the
// variables the providers package lists (which host/spec refuses to hand
// to plugins).
func TestBuiltinVariables(t *testing.T) {
	vars := providers.BuiltinVariables()
	builtins := registry.Builtins()
	if len(vars) != len(builtins) {
		t.Fatalf("%d built-in providers, %d in providers.BuiltinVariables", len(builtins), len(vars))
	}
	for i, b := range builtins {
		v := vars[i]
		if b.Name != v.Provider || strings.Join(b.APIKeyEnvs, ",") != strings.Join(v.APIKey, ",") || b.BaseURLEnv != v.BaseURL || b.ModelEnv != v.Model {
			t.Errorf("built-in %+v, providers says %+v", b, v)
		}
	}
}

// drain makes one request through p and reads the whole answer.
func drain(t *testing.T, p providers.ChatProvider) {
	t.Helper()
	s, err := p.Stream(context.Background(), providers.Request{History: []providers.Message{{Role: providers.RoleUser,
		Content: []providers.ContentPart{providers.TextPart("hi")}}}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			return
		}
	}
}
