package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers/config"
)

const full = `
default_model: sonnet
providers:
  work-claude:
    type: anthropic
    base_url: https://claude.example.com
    api_key_env: WORK_KEY
    headers:
      X-Team: blue
  local:
    type: openai-compatible
    base_url: http://localhost:8080/v1
    api_key: sk-local
models:
  sonnet:
    provider: work-claude
    model: claude-sonnet-4-5
    max_context_size: 200000
    max_tokens: 32000
    capabilities: [thinking, image_in]
  gem:
    provider: google
    model: gemini-3-pro-preview
  qwen:
    provider: local
    model: qwen3
`

func TestParse(t *testing.T) {
	f, err := config.Parse("c.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	if f.DefaultModel != "sonnet" || f.Path != "c.yaml" {
		t.Errorf("default %q path %q", f.DefaultModel, f.Path)
	}
	if got := f.ProviderNames(); !reflect.DeepEqual(got, []string{"local", "work-claude"}) {
		t.Errorf("providers %v", got)
	}
	if got := f.Aliases(); !reflect.DeepEqual(got, []string{"gem", "qwen", "sonnet"}) {
		t.Errorf("aliases %v", got)
	}
	want := config.Provider{Name: "work-claude", Type: "anthropic", BaseURL: "https://claude.example.com", APIKeyEnv: "WORK_KEY", Headers: map[string]string{"X-Team": "blue"}}
	if got := f.Providers["work-claude"]; !reflect.DeepEqual(got, want) {
		t.Errorf("provider %+v, want %+v", got, want)
	}
	if f.Providers["local"].APIKey != "sk-local" {
		t.Errorf("local %+v", f.Providers["local"])
	}
	m := f.Models["sonnet"]
	if m.Provider != "work-claude" || m.Model != "claude-sonnet-4-5" || m.MaxContextSize != 200000 || m.MaxTokens != 32000 ||
		!m.Has(config.CapThinking) || !m.Has(config.CapImageIn) || m.Has(config.CapVideoIn) {
		t.Errorf("model %+v", m)
	}
	if f.Models["gem"].Provider != "google" {
		t.Errorf("gem %+v", f.Models["gem"])
	}
}

func TestKeyVariables(t *testing.T) {
	f, err := config.Parse("c.yaml", []byte(`
providers:
  b: {type: openai, api_key_env: CORP_LLM_TOKEN}
  a: {type: anthropic, api_key_env: AAA_KEY}
  c: {type: kimi, api_key_env: CORP_LLM_TOKEN}
  d: {type: google, api_key: inline}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.KeyVariables(); !reflect.DeepEqual(got, []string{"AAA_KEY", "CORP_LLM_TOKEN"}) {
		t.Errorf("KeyVariables = %v", got)
	}
	empty, _, _ := config.LoadOptional("")
	if got := empty.KeyVariables(); len(got) != 0 {
		t.Errorf("no file: KeyVariables = %v", got)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, data := range []string{"", "# nothing\n", "providers:\nmodels:\n"} {
		f, err := config.Parse("c.yaml", []byte(data))
		if err != nil || len(f.Providers) != 0 || len(f.Models) != 0 {
			t.Errorf("Parse(%q) = %+v, %v", data, f, err)
		}
	}
}

func TestParseEagerPlugins(t *testing.T) {
	for data, want := range map[string]bool{"": false, "eager_plugins: true\n": true, "eager_plugins: false\n": false, "eager_plugins: True\n": true} {
		f, err := config.Parse("c.yaml", []byte(data))
		if err != nil || f.EagerPlugins != want {
			t.Errorf("Parse(%q): eager %v, %v; want %v", data, f.EagerPlugins, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"unknown top key", "providerz: {}\n", `config c.yaml: line 1: unknown key "providerz" in the top level (known: default_model, eager_plugins, hooks, models, permissions, plugin_mirrors, plugin_trust, prices, providers, telemetry)`},
		{"prices without output", "models:\n  m:\n    provider: kimi\n    model: k\n    prices: {input: 1}\n", `line 5: models.m.prices.output: missing`},
		{"negative price", "models:\n  m:\n    provider: kimi\n    model: k\n    prices: {input: -1, output: 2}\n", `models.m.prices.input: want a number of US dollars per million tokens, 0 or more, not "-1"`},
		{"price not a number", "prices:\n  gpt: {input: cheap, output: 2}\n", `line 2: prices.gpt.input: want a number`},
		{"unknown price key", "prices:\n  gpt: {input: 1, output: 2, cache: 1}\n", `unknown key "cache" in prices.gpt (known: cached_input, input, output)`},
		{"prices not a mapping", "models:\n  m:\n    provider: kimi\n    model: k\n    prices: 3\n", `models.m.prices: want a mapping`},
		{"unknown provider key", "providers:\n  p:\n    type: kimi\n    apikey: x\n", `config c.yaml: line 4: unknown key "apikey" in providers.p (known: api_key, api_key_env, base_url, connect_timeout, headers, stream_idle_timeout, type)`},
		{"unknown model key", "models:\n  m:\n    provider: kimi\n    model: k\n    context: 5\n", `line 5: unknown key "context" in models.m`},
		{"bad type", "providers:\n  p:\n    type: azure\n", `line 3: providers.p.type: unknown type "azure" (known: kimi, openai, openai-compatible, anthropic, google)`},
		{"missing type", "providers:\n  p:\n    base_url: http://x\n", `line 3: providers.p.type: missing`},
		{"both keys", "providers:\n  p:\n    type: openai\n    api_key: a\n    api_key_env: B\n", `providers.p: set api_key or api_key_env, not both`},
		{"compatible without URL", "providers:\n  p:\n    type: openai-compatible\n", `providers.p.base_url: missing`},
		{"bad URL", "providers:\n  p:\n    type: openai\n    base_url: localhost:8080\n", `providers.p.base_url: "localhost:8080" is not an http(s) URL`},
		{"bad env name", "providers:\n  p:\n    type: openai\n    api_key_env: $KEY\n", `api_key_env: want the name of an environment variable`},
		{"unknown model provider", "models:\n  m:\n    provider: nope\n    model: x\n", `models.m.provider: unknown provider "nope" (configured: none; built-in: kimi, openai, anthropic, google)`},
		{"missing model", "models:\n  m:\n    provider: kimi\n", `line 3: models.m.model: missing`},
		{"bad context size", "models:\n  m:\n    provider: kimi\n    model: k\n    max_context_size: big\n", `models.m.max_context_size: want a positive whole number, not "big"`},
		{"bad capability", "models:\n  m:\n    provider: kimi\n    model: k\n    capabilities: [vision]\n", `unknown capability "vision" (known: thinking, always_thinking, image_in, video_in)`},
		{"capabilities not a list", "models:\n  m:\n    provider: kimi\n    model: k\n    capabilities: thinking\n", `models.m.capabilities: want a list`},
		{"bad default", "default_model: x\n", `line 1: default_model: "x" is not a model alias (aliases: none)`},
		{"repeated key", "providers:\n  p:\n    type: kimi\n    type: openai\n", `key "type" repeated in providers.p`},
		{"not a mapping", "- a\n", `line 1: want a mapping`},
		{"invalid YAML", "providers: [\n", `config c.yaml: invalid YAML:`},
		{"bad idle timeout", "providers:\n  p:\n    type: kimi\n    stream_idle_timeout: soon\n", `line 4: providers.p.stream_idle_timeout: want a positive duration such as 90s or 5m, not "soon"`},
		{"zero connect timeout", "models:\n  m:\n    provider: kimi\n    model: k\n    connect_timeout: 0\n", `line 5: models.m.connect_timeout: want a positive duration such as 90s or 5m, not "0"`},
		{"negative timeout", "models:\n  m:\n    provider: kimi\n    model: k\n    stream_idle_timeout: -5s\n", `models.m.stream_idle_timeout: want a positive duration`},
		{"eager_plugins not a bool", "eager_plugins: yes please\n", `line 1: eager_plugins: want true or false, not "yes please"`},
		{"headers not strings", "providers:\n  p:\n    type: kimi\n    headers: {A: [1]}\n", `providers.p.headers.A: want a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("c.yaml", []byte(tt.data))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/kosong-host/config.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/home/u"}, "/home/u/.config/kosong-host/config.yaml"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.config/kosong-host/config.yaml"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := config.DefaultPath(env(tt.env)); got != tt.want {
			t.Errorf("DefaultPath(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if _, err := config.Load(path); !errors.Is(err, config.ErrNotFound) || !strings.Contains(err.Error(), path) {
		t.Errorf("Load of a missing file: %v", err)
	}
	f, found, err := config.LoadOptional(path)
	if err != nil || found || f.Path != path || f.Models == nil {
		t.Errorf("LoadOptional of a missing file: %+v %v %v", f, found, err)
	}
	if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	f, found, err = config.LoadOptional(path)
	if err != nil || !found || len(f.Models) != 3 {
		t.Errorf("LoadOptional: %+v %v %v", f, found, err)
	}
	if err := os.WriteFile(path, []byte("nope: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.LoadOptional(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadOptional of a bad file: %v", err)
	}
	if f, found, err := config.LoadOptional(""); err != nil || found || f.Path != "" {
		t.Errorf("LoadOptional(\"\"): %+v %v %v", f, found, err)
	}
}

func TestParseTimeoutsAndCapabilities(t *testing.T) {
	data := `
providers:
  slow:
    type: openai-compatible
    base_url: http://localhost:8080/v1
    connect_timeout: 30
    stream_idle_timeout: 10m
models:
  text-only:
    provider: slow
    model: m
    capabilities: []
    stream_idle_timeout: 90s
  seeing:
    provider: slow
    model: m
    capabilities: [image_in]
  unknown:
    provider: slow
    model: m
`
	f, err := config.Parse("c.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Providers["slow"].Timeouts, (config.Timeouts{Connect: 30 * time.Second, StreamIdle: 10 * time.Minute}); got != want {
		t.Errorf("provider timeouts %+v, want %+v", got, want)
	}
	m := f.Models["text-only"]
	if got, want := m.Timeouts.Over(f.Providers["slow"].Timeouts), (config.Timeouts{Connect: 30 * time.Second, StreamIdle: 90 * time.Second}); got != want {
		t.Errorf("alias timeouts over the provider's %+v, want %+v", got, want)
	}
	for alias, lacks := range map[string]bool{"text-only": true, "seeing": false, "unknown": false} {
		if got := f.Models[alias].Lacks(config.CapImageIn); got != lacks {
			t.Errorf("%s: Lacks(image_in) %v, want %v", alias, got, lacks)
		}
	}
}

// TestParsePrices: an alias's prices, the top-level prices by model name,
// cached_input defaulting to input; an alias's prices win.
func TestParsePrices(t *testing.T) {
	f, err := config.Parse("c.yaml", []byte("models:\n  s:\n    provider: anthropic\n    model: claude\n    prices: {input: 3, output: 15, cached_input: 0.3}\n"+
		"prices:\n  gpt: {input: 2, output: 8}\n  claude: {input: 9, output: 9}\n"))
	if err != nil {
		t.Fatal(err)
	}
	alias := f.Models["s"]
	tests := []struct {
		name  string
		alias *config.Model
		model string
		want  *config.Prices
	}{
		{"alias", &alias, "claude", &config.Prices{Input: 3, Output: 15, CachedInput: 0.3}},
		{"by name, cached defaults to input", nil, "gpt", &config.Prices{Input: 2, Output: 8, CachedInput: 2}},
		{"none", nil, "other", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.PricesOf(tt.alias, tt.model)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("prices %+v, want %+v", got, tt.want)
			}
		})
	}
}
