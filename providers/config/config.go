// Package config reads the provider and model configuration file:
// $XDG_CONFIG_HOME/kosong-host/config.yaml (else
// ~/.config/kosong-host/config.yaml), or the file given with --config.
//
//	default_model: sonnet          # optional: an alias below
//	providers:
//	  work-claude:                 # a name of your choice
//	    type: anthropic            # kimi | openai | openai-compatible | anthropic | google
//	    base_url: https://api.anthropic.com
//	    api_key_env: WORK_ANTHROPIC_KEY   # or api_key: sk-... (not both)
//	    headers: {X-Team: blue}
//	    connect_timeout: 60s       # optional: wait for the response headers (default 120s)
//	    stream_idle_timeout: 5m    # optional: a silent stream fails after this (default 300s)
//	models:
//	  sonnet:                      # the alias: --model sonnet, or an agent's model: sonnet
//	    provider: work-claude      # a provider above, or a built-in: kimi, openai, anthropic, google
//	    model: claude-sonnet-4-5
//	    max_context_size: 200000
//	    max_tokens: 32000          # optional cap of each response
//	    capabilities: [thinking, image_in]   # declared: images go only to image_in models
//	    stream_idle_timeout: 10m   # optional, overrides the provider's
//	    prices: {input: 3, output: 15, cached_input: 0.3}   # optional: US dollars per million tokens
//	prices:                        # optional: prices of models chosen without an alias, by model name
//	  gpt-4.1: {input: 2, output: 8}
//
// Timeouts are Go durations (90s, 5m) or whole seconds. A model alias that
// declares capabilities without image_in gets a text placeholder instead of
// each image in the history; an alias without capabilities, or no alias,
// sends images as they are.
//
// Unknown keys and bad values are errors naming the file, the line and the
// key, on one line. How keys, base URLs and models combine with the
// environment and the flags is the registry's business (see
// providers/registry).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The provider types.
const (
	TypeKimi             = "kimi"
	TypeOpenAI           = "openai"
	TypeOpenAICompatible = "openai-compatible"
	TypeAnthropic        = "anthropic"
	TypeGoogle           = "google"
)

// Types lists the provider types.
func Types() []string {
	return []string{TypeKimi, TypeOpenAI, TypeOpenAICompatible, TypeAnthropic, TypeGoogle}
}

// BuiltinProviders are the provider names a model may use without
// configuring them: each is a provider of the type of the same name.
func BuiltinProviders() []string {
	return []string{TypeKimi, TypeOpenAI, TypeAnthropic, TypeGoogle}
}

// The model capabilities.
const (
	CapThinking       = "thinking"
	CapAlwaysThinking = "always_thinking"
	CapImageIn        = "image_in"
	CapVideoIn        = "video_in"
)

// Capabilities lists the known capabilities.
func Capabilities() []string {
	return []string{CapThinking, CapAlwaysThinking, CapImageIn, CapVideoIn}
}

// File is a configuration file.
type File struct {
	// Path is the file read; empty for no file.
	Path string
	// DefaultModel is the alias used when nothing else picks a model.
	DefaultModel string
	Providers    map[string]Provider
	Models       map[string]Model
	// Prices are the top-level prices, by model name (see Prices).
	Prices map[string]Prices
	// Hooks and Permissions are the file's `hooks` and `permissions`, as
	// written (nil when absent); the host reads them (host/spec.ParseHooks,
	// host/spec.ParsePermissions), this package only carries them.
	Hooks, Permissions *yaml.Node
	// PluginMirrors and PluginTrust are `plugin_mirrors` and `plugin_trust`
	// as written (nil when absent), read by host/distribution.
	PluginMirrors, PluginTrust *yaml.Node
	// EagerPlugins is `eager_plugins`: every plugin starts when the
	// session opens, not at its first call (--eager-plugins).
	EagerPlugins bool
	// Telemetry is `telemetry` as written (nil when absent), read by
	// host/telemetry when the process starts.
	Telemetry *yaml.Node
}

// Provider is a configured provider.
type Provider struct {
	Name    string
	Type    string
	BaseURL string
	// APIKey is the key written in the file; APIKeyEnv names the variable
	// holding it instead. At most one is set.
	APIKey    string
	APIKeyEnv string
	Headers   map[string]string
	// Timeouts are the provider's waits (zero: not configured).
	Timeouts Timeouts
}

// Timeouts are the configured waits on a provider's API; zero is not
// configured.
type Timeouts struct {
	// Connect is connect_timeout: until the response headers.
	Connect time.Duration
	// StreamIdle is stream_idle_timeout: the longest silence of a stream.
	StreamIdle time.Duration
}

// Over returns t, with the waits t does not configure taken from base.
func (t Timeouts) Over(base Timeouts) Timeouts {
	if t.Connect == 0 {
		t.Connect = base.Connect
	}
	if t.StreamIdle == 0 {
		t.StreamIdle = base.StreamIdle
	}
	return t
}

// Model is a model alias.
type Model struct {
	Alias string
	// Provider is a configured provider's name or a built-in one.
	Provider       string
	Model          string
	MaxContextSize int
	MaxTokens      int
	Capabilities   []string
	// CapabilitiesDeclared says the alias has a capabilities list (maybe
	// empty): then a capability it does not list, the model lacks.
	CapabilitiesDeclared bool
	// Timeouts override the provider's (zero: not configured).
	Timeouts Timeouts
	// Prices are the alias's prices (nil: not configured).
	Prices *Prices
}

// Has reports whether the model has the capability.
func (m Model) Has(capability string) bool { return slices.Contains(m.Capabilities, capability) }

// Lacks reports whether the alias declares capabilities without this one.
func (m Model) Lacks(capability string) bool { return m.CapabilitiesDeclared && !m.Has(capability) }

// ProviderNames lists the configured providers, sorted.
func (f *File) ProviderNames() []string { return sortedKeys(f.Providers) }

// KeyVariables lists the variables the providers' api_key_env name,
// sorted, unique: key variables the host refuses to hand to a plugin or an
// MCP server (see host/spec.SecretEnv) as it refuses the built-in ones.
func (f *File) KeyVariables() []string {
	var names []string
	for _, p := range f.Providers {
		if p.APIKeyEnv != "" && !slices.Contains(names, p.APIKeyEnv) {
			names = append(names, p.APIKeyEnv)
		}
	}
	sort.Strings(names)
	return names
}

// Aliases lists the model aliases, sorted.
func (f *File) Aliases() []string { return sortedKeys(f.Models) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DefaultPath is where the file is looked for: $XDG_CONFIG_HOME/kosong-host/
// config.yaml, else $HOME/.config/kosong-host/config.yaml; empty when
// neither variable is set. getenv defaults to os.Getenv.
func DefaultPath(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if dir := strings.TrimSpace(getenv("XDG_CONFIG_HOME")); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "kosong-host", "config.yaml")
	}
	if home := strings.TrimSpace(getenv("HOME")); home != "" {
		return filepath.Join(home, ".config", "kosong-host", "config.yaml")
	}
	return ""
}

// ErrNotFound is wrapped by Load when the file does not exist.
var ErrNotFound = errors.New("file not found")

// Load reads and checks the file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config %s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return Parse(path, data)
}

// LoadOptional is Load, except that a missing file is an empty
// configuration (found false). An empty path is no file.
func LoadOptional(path string) (f *File, found bool, err error) {
	if path == "" {
		return &File{Providers: map[string]Provider{}, Models: map[string]Model{}}, false, nil
	}
	f, err = Load(path)
	if errors.Is(err, ErrNotFound) {
		return &File{Path: path, Providers: map[string]Provider{}, Models: map[string]Model{}}, false, nil
	}
	return f, err == nil, err
}

type parser struct{ path string }

func (p parser) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("config %s: line %d: %s", p.path, n.Line, fmt.Sprintf(format, args...))
}

// Parse checks data, the content of the file at path.
func Parse(path string, data []byte) (*File, error) {
	p := parser{path: path}
	f := &File{Path: path, Providers: map[string]Provider{}, Models: map[string]Model{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " ")
		return nil, fmt.Errorf("config %s: invalid YAML: %s", path, msg)
	}
	if len(doc.Content) == 0 {
		return f, nil // an empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root, "want a mapping with providers, models and default_model")
	}
	var defaultNode *yaml.Node
	err := p.fields(root, "the top level", map[string]func(k, v *yaml.Node) error{
		"default_model": func(_, v *yaml.Node) (err error) {
			defaultNode = v
			f.DefaultModel, err = p.str(v, "default_model")
			return err
		},
		"providers": func(_, v *yaml.Node) error {
			return p.each(v, "providers", func(k, v *yaml.Node) error {
				prov, err := p.provider(k.Value, v)
				if err == nil {
					f.Providers[k.Value] = prov
				}
				return err
			})
		},
		"hooks":          func(_, v *yaml.Node) error { f.Hooks = v; return nil },
		"permissions":    func(_, v *yaml.Node) error { f.Permissions = v; return nil },
		"plugin_mirrors": func(_, v *yaml.Node) error { f.PluginMirrors = v; return nil },
		"plugin_trust":   func(_, v *yaml.Node) error { f.PluginTrust = v; return nil },
		"eager_plugins": func(_, v *yaml.Node) error {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				return p.errorf(v, "eager_plugins: want true or false, not %q", v.Value)
			}
			f.EagerPlugins = strings.EqualFold(v.Value, "true")
			return nil
		},
		"telemetry": func(_, v *yaml.Node) error { f.Telemetry = v; return nil },
		"prices": func(_, v *yaml.Node) error {
			f.Prices = map[string]Prices{}
			return p.each(v, "prices", func(k, v *yaml.Node) error {
				pr, err := p.prices(v, "prices."+k.Value)
				f.Prices[k.Value] = pr
				return err
			})
		},
		"models": func(_, v *yaml.Node) error {
			return p.each(v, "models", func(k, v *yaml.Node) error {
				m, err := p.model(k.Value, v)
				if err == nil {
					f.Models[k.Value] = m
				}
				return err
			})
		},
	})
	if err != nil {
		return nil, err
	}
	// Cross references, checked once everything is read.
	for _, alias := range f.Aliases() {
		m := f.Models[alias]
		if _, ok := f.Providers[m.Provider]; !ok && !slices.Contains(BuiltinProviders(), m.Provider) {
			return nil, fmt.Errorf("config %s: models.%s.provider: unknown provider %q (configured: %s; built-in: %s)",
				path, alias, m.Provider, listOrNone(f.ProviderNames()), strings.Join(BuiltinProviders(), ", "))
		}
	}
	if f.DefaultModel != "" {
		if _, ok := f.Models[f.DefaultModel]; !ok {
			return nil, p.errorf(defaultNode, "default_model: %q is not a model alias (aliases: %s)", f.DefaultModel, listOrNone(f.Aliases()))
		}
	}
	return f, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// fields calls the handler of each key of mapping n; an unknown or repeated
// key is an error listing the known ones.
func (p parser) fields(n *yaml.Node, where string, handlers map[string]func(k, v *yaml.Node) error) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			return p.errorf(k, "unknown key %q in %s (known: %s)", k.Value, where, strings.Join(sortedKeys(handlers), ", "))
		}
		if seen[k.Value] {
			return p.errorf(k, "key %q repeated in %s", k.Value, where)
		}
		seen[k.Value] = true
		if err := h(k, v); err != nil {
			return err
		}
	}
	return nil
}

// each calls fn for each entry of the mapping n (null is empty).
func (p parser) each(n *yaml.Node, where string, fn func(k, v *yaml.Node) error) error {
	if n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errorf(n, "%s: want a mapping of names to entries", where)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if strings.TrimSpace(k.Value) == "" {
			return p.errorf(k, "%s: empty name", where)
		}
		if seen[k.Value] {
			return p.errorf(k, "%s: %q defined twice", where, k.Value)
		}
		seen[k.Value] = true
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

func (p parser) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.errorf(n, "%s: want a string", field)
	}
	return strings.TrimSpace(n.Value), nil
}

func (p parser) positive(n *yaml.Node, field string) (int, error) {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v <= 0 {
		return 0, p.errorf(n, "%s: want a positive whole number, not %q", field, n.Value)
	}
	return v, nil
}

// duration reads a timeout: a Go duration (90s, 5m) or whole seconds.
func (p parser) duration(n *yaml.Node, field string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if v, err := strconv.Atoi(n.Value); err == nil && v > 0 {
			return time.Duration(v) * time.Second, nil
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if d, err := time.ParseDuration(strings.TrimSpace(n.Value)); err == nil && d > 0 {
			return d, nil
		}
	}
	return 0, p.errorf(n, "%s: want a positive duration such as 90s or 5m, not %q", field, n.Value)
}

// timeoutFields are the handlers of connect_timeout and stream_idle_timeout.
func (p parser) timeoutFields(where string, t *Timeouts, handlers map[string]func(k, v *yaml.Node) error) map[string]func(k, v *yaml.Node) error {
	handlers["connect_timeout"] = func(_, v *yaml.Node) (err error) {
		t.Connect, err = p.duration(v, where+".connect_timeout")
		return err
	}
	handlers["stream_idle_timeout"] = func(_, v *yaml.Node) (err error) {
		t.StreamIdle, err = p.duration(v, where+".stream_idle_timeout")
		return err
	}
	return handlers
}

func (p parser) provider(name string, n *yaml.Node) (Provider, error) {
	where := "providers." + name
	prov := Provider{Name: name}
	if n.Kind != yaml.MappingNode {
		return prov, p.errorf(n, "%s: want a mapping with type, base_url, api_key or api_key_env, headers, connect_timeout, stream_idle_timeout", where)
	}
	var keyNode *yaml.Node
	err := p.fields(n, where, p.timeoutFields(where, &prov.Timeouts, map[string]func(k, v *yaml.Node) error{
		"type": func(_, v *yaml.Node) (err error) {
			prov.Type, err = p.str(v, where+".type")
			if err == nil && !slices.Contains(Types(), prov.Type) {
				err = p.errorf(v, "%s.type: unknown type %q (known: %s)", where, prov.Type, strings.Join(Types(), ", "))
			}
			return err
		},
		"base_url": func(_, v *yaml.Node) (err error) {
			prov.BaseURL, err = p.str(v, where+".base_url")
			if err == nil {
				u, perr := url.Parse(prov.BaseURL)
				if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = p.errorf(v, "%s.base_url: %q is not an http(s) URL", where, prov.BaseURL)
				}
			}
			return err
		},
		"api_key": func(k, v *yaml.Node) (err error) {
			keyNode = k
			prov.APIKey, err = p.str(v, where+".api_key")
			return err
		},
		"api_key_env": func(k, v *yaml.Node) (err error) {
			keyNode = k
			prov.APIKeyEnv, err = p.str(v, where+".api_key_env")
			if err == nil && (prov.APIKeyEnv == "" || strings.ContainsAny(prov.APIKeyEnv, " =$")) {
				err = p.errorf(v, "%s.api_key_env: want the name of an environment variable, not %q", where, prov.APIKeyEnv)
			}
			return err
		},
		"headers": func(_, v *yaml.Node) error {
			prov.Headers = map[string]string{}
			return p.each(v, where+".headers", func(k, v *yaml.Node) error {
				val, err := p.str(v, where+".headers."+k.Value)
				prov.Headers[k.Value] = val
				return err
			})
		},
	}))
	if err != nil {
		return prov, err
	}
	switch {
	case prov.Type == "":
		return prov, p.errorf(n, "%s.type: missing (one of %s)", where, strings.Join(Types(), ", "))
	case prov.APIKey != "" && prov.APIKeyEnv != "":
		return prov, p.errorf(keyNode, "%s: set api_key or api_key_env, not both", where)
	case prov.Type == TypeOpenAICompatible && prov.BaseURL == "":
		return prov, p.errorf(n, "%s.base_url: missing (type openai-compatible needs one)", where)
	}
	return prov, nil
}

func (p parser) model(alias string, n *yaml.Node) (Model, error) {
	where := "models." + alias
	m := Model{Alias: alias}
	if n.Kind != yaml.MappingNode {
		return m, p.errorf(n, "%s: want a mapping with provider, model, max_context_size, max_tokens, capabilities, prices, connect_timeout, stream_idle_timeout", where)
	}
	err := p.fields(n, where, p.timeoutFields(where, &m.Timeouts, map[string]func(k, v *yaml.Node) error{
		"provider": func(_, v *yaml.Node) (err error) {
			m.Provider, err = p.str(v, where+".provider")
			return err
		},
		"model": func(_, v *yaml.Node) (err error) {
			m.Model, err = p.str(v, where+".model")
			return err
		},
		"max_context_size": func(_, v *yaml.Node) (err error) {
			m.MaxContextSize, err = p.positive(v, where+".max_context_size")
			return err
		},
		"max_tokens": func(_, v *yaml.Node) (err error) {
			m.MaxTokens, err = p.positive(v, where+".max_tokens")
			return err
		},
		"prices": func(_, v *yaml.Node) error {
			pr, err := p.prices(v, where+".prices")
			m.Prices = &pr
			return err
		},
		"capabilities": func(_, v *yaml.Node) error {
			if v.Kind != yaml.SequenceNode {
				return p.errorf(v, "%s.capabilities: want a list, e.g. [thinking, image_in]", where)
			}
			m.CapabilitiesDeclared = true
			for _, c := range v.Content {
				name, err := p.str(c, where+".capabilities")
				if err != nil {
					return err
				}
				if !slices.Contains(Capabilities(), name) {
					return p.errorf(c, "%s.capabilities: unknown capability %q (known: %s)", where, name, strings.Join(Capabilities(), ", "))
				}
				if !slices.Contains(m.Capabilities, name) {
					m.Capabilities = append(m.Capabilities, name)
				}
			}
			return nil
		},
	}))
	if err != nil {
		return m, err
	}
	switch {
	case m.Provider == "":
		return m, p.errorf(n, "%s.provider: missing", where)
	case m.Model == "":
		return m, p.errorf(n, "%s.model: missing", where)
	}
	return m, nil
}
