// Package registry builds the chat provider the user asked for, from flags
// (Options), the configuration file (providers/config) and the
// environment, including a .env file.
//
// # Choosing the provider and the model
//
//  1. --provider scripted, or --script alone: the scripted provider.
//  2. --model NAME that names a model alias of the configuration file: that
//     alias, i.e. its provider and model (with --provider too, it must be
//     the alias's provider).
//  3. Neither --provider nor --model: the agent's model (Options.ModelAlias)
//     when set: an alias (or, for older agents, a provider name); else the
//     file's default_model, when set.
//  4. A --model that is not an alias is PROVIDER/MODEL (that provider's
//     model), a plain name with --provider (a model of that provider), the
//     model of an alias (that alias), or a built-in provider's default
//     model (that provider); any other name is a ConfigError naming it
//     (Unknown) and the names it could be (Known), so a typo is never sent.
//  5. Otherwise the provider is --provider, else the first of kimi,
//     openai, anthropic and google whose API key is set; the model is
//     --model, else {P}_MODEL_NAME, else the provider's default.
//
// A provider name is one configured in the file, else a built-in one
// (kimi, openai, anthropic, google), which is a provider of the type of the
// same name with its defaults; a configured provider may reuse a built-in
// name to change it.
//
// # Precedence of keys, base URLs and models
//
// For a provider of type T, with the built-in variables of T ({T}_API_KEY,
// {T}_BASE_URL, {T}_MODEL_NAME for kimi, openai, anthropic; GOOGLE_* for
// google, whose key may also be in GEMINI_API_KEY; anthropic's may be a
// bearer token in ANTHROPIC_AUTH_TOKEN; none for openai-compatible):
//
//   - API key: when the provider sets api_key_env, that variable and
//     nothing else. Otherwise {T}_API_KEY when set, else the file's
//     api_key. A missing key is a ConfigError naming the variable, e.g.
//     "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) is not set (provider anthropic)"; an
//     openai-compatible provider may have no key (local servers).
//   - Base URL: --base-url, else {T}_BASE_URL, else the file's base_url,
//     else the type's default. {T}_BASE_URL from WorkDir/.env counts only
//     when the key comes from the same .env: a key from the environment or
//     the configuration file never goes to a base URL a work dir's .env
//     names (the selection warns that it ignored it). Selection says where
//     a base URL other than the default came from (BaseURLNote).
//   - Model: the alias's model. Without an alias: --model, else
//     {T}_MODEL_NAME, else the type's default.
//   - Timeouts: --stream-idle-timeout (Options.StreamIdleTimeout), else
//     the alias's stream_idle_timeout, else the provider's, else 300 s;
//     connect_timeout: the alias's, else the provider's, else 120 s.
//
// # One factory per provider type
//
// Once chosen, a provider's Settings go to the factory of its type
// (factories: openai.go, anthropic.go, google.go), which computes that
// provider's own options and builds it.
//
// Variables are read from the environment, then from WorkDir/.env; the
// default configuration file's path comes from the environment alone.
package registry

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/scripted"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// Options is what the user asked for.
type Options struct {
	// Provider is a provider name (configured or built-in: kimi, openai,
	// anthropic, google, scripted); empty lets the rules above choose.
	Provider string
	// Model is --model: a model alias when the configuration file names
	// one, else a model name for the chosen provider (overriding
	// {P}_MODEL_NAME).
	Model string
	// BaseURL overrides the provider's base URL.
	BaseURL string
	// Script is the scripted provider's script file, relative to WorkDir
	// unless absolute.
	Script string
	// Getenv reads the environment (os.Getenv when nil). A variable it
	// returns non-empty wins over the same one in .env.
	Getenv func(string) string
	// WorkDir holds the .env file read, if present (default: the current
	// directory).
	WorkDir string
	// IgnoreDotEnv leaves WorkDir/.env unread (an untrusted folder's).
	IgnoreDotEnv bool
	// ConfigPath is the configuration file (--config); it must exist. Empty
	// means the default path (config.DefaultPath), read when it exists.
	ConfigPath string
	// ModelAlias is the agent's model: a model alias of the configuration
	// file (or a provider name, as older agents have). It is used when
	// neither Provider nor Model is set.
	ModelAlias string
	// StreamIdleTimeout, when > 0, is --stream-idle-timeout: it overrides
	// the configured stream_idle_timeout of every provider.
	StreamIdleTimeout time.Duration
}

// ConfigError is a configuration mistake of the user's: a missing key, an
// unknown provider, a bad script or configuration file. A CLI maps it to
// exit status 2.
type ConfigError struct {
	Msg string
	Err error
	// Unknown is the model name that was not recognised, and Known the
	// names it could have been (for a "did you mean"); empty otherwise.
	Unknown string
	Known   []string
	// NoProvider: nothing chose a provider (no flag, alias, default_model
	// or API key): a first run, which a front end may set up.
	NoProvider bool
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Scripted is the scripted provider's name.
const Scripted = "scripted"

// Builtin is a built-in provider: its defaults and variables.
type Builtin struct {
	Name    string
	BaseURL string
	Model   string
	// BaseURLEnv and ModelEnv override the base URL and the model;
	// APIKeyEnvs hold the key, the first set wins.
	BaseURLEnv string
	ModelEnv   string
	APIKeyEnvs []string
}

// Builtins lists the built-in providers in the order one is picked when
// nothing else chooses: kimi, openai, anthropic, google.
func Builtins() []Builtin {
	var out []Builtin
	for _, p := range openaicompat.Presets() {
		out = append(out, Builtin{Name: p.Name, BaseURL: p.BaseURL, Model: p.Model,
			BaseURLEnv: p.BaseURLEnv, ModelEnv: p.ModelEnv, APIKeyEnvs: []string{p.APIKeyEnv}})
	}
	return append(out,
		Builtin{Name: anthropic.Name, BaseURL: anthropic.DefaultBaseURL, Model: anthropic.DefaultModel,
			BaseURLEnv: anthropic.BaseURLEnv, ModelEnv: anthropic.ModelEnv, APIKeyEnvs: []string{anthropic.APIKeyEnv, anthropic.AuthTokenEnv}},
		Builtin{Name: google.Name, BaseURL: google.DefaultBaseURL, Model: google.DefaultModel,
			BaseURLEnv: google.BaseURLEnv, ModelEnv: google.ModelEnv, APIKeyEnvs: []string{google.APIKeyEnv, google.AltAPIKeyEnv}},
	)
}

// LookupBuiltin returns the built-in provider of a type.
func LookupBuiltin(name string) (Builtin, bool) {
	for _, b := range Builtins() {
		if b.Name == name {
			return b, true
		}
	}
	return Builtin{}, false
}

// KeyVars names the variables of the key, for messages: "GOOGLE_API_KEY
// (or GEMINI_API_KEY)".
func (b Builtin) KeyVars() string {
	if len(b.APIKeyEnvs) > 1 {
		return b.APIKeyEnvs[0] + " (or " + strings.Join(b.APIKeyEnvs[1:], ", ") + ")"
	}
	return b.APIKeyEnvs[0]
}

// Known lists the built-in provider names New accepts (configured
// providers come on top).
func Known() []string {
	var names []string
	for _, b := range Builtins() {
		names = append(names, b.Name)
	}
	return append(names, Scripted)
}

// Selection is the provider New built, with what the alias says of the
// model.
type Selection struct {
	Provider providers.ChatProvider
	// Alias is the model alias used ("" when none).
	Alias string
	// MaxContextSize is the alias's max_context_size (0: not configured).
	MaxContextSize int
	// Capabilities are the alias's capabilities.
	Capabilities []string
	// CapabilitiesDeclared says the alias lists its capabilities (a
	// capability it does not list, the model lacks); else they are unknown.
	CapabilitiesDeclared bool
	// ConfigPath is the configuration file read ("" when none).
	ConfigPath string
	// Prices are the model's prices (the alias's, else the top-level
	// prices of the model's name); nil when the configuration has none.
	Prices *config.Prices
	// Timeouts are the provider's waits, resolved (zero for scripted).
	Timeouts timeouts.Timeouts
	// BaseURL is the provider's base URL ("" for scripted); BaseURLSource
	// says where it came from when it is not the type's default ("" then):
	// "the --base-url flag", "environment variable OPENAI_BASE_URL",
	// "OPENAI_BASE_URL in /work/.env" or "base_url of provider P in
	// /home/u/.config/kosong-host/config.yaml". BaseURLNote and Notes
	// put it in words.
	BaseURL, BaseURLSource string
	// Warnings say what the selection ignored: a base URL in .env whose
	// key is not from that .env. Notes prefixes them with "warning: ".
	Warnings []string
}

// New builds the provider opts ask for. Every error is a *ConfigError.
func New(opts Options) (providers.ChatProvider, error) {
	sel, err := Select(opts)
	if err != nil {
		return nil, err
	}
	return sel.Provider, nil
}

// resolver carries what a selection reads.
type resolver struct {
	opts Options
	dir  string
	env  *environment
	// getenv is env.get: the environment, then .env.
	getenv func(string) string
	file   *config.File
}

func newResolver(opts Options) (*resolver, error) {
	r := &resolver{opts: opts, dir: opts.WorkDir}
	if r.dir == "" {
		r.dir = "."
	}
	var err error
	if r.env, err = readEnvironment(opts.Getenv, r.dir, opts.IgnoreDotEnv); err != nil {
		return nil, err
	}
	r.getenv = r.env.get
	if opts.ConfigPath != "" {
		r.file, err = config.Load(opts.ConfigPath)
	} else {
		// Where the file is comes from the environment alone: a work
		// dir's .env does not choose the configuration.
		r.file, _, err = config.LoadOptional(config.DefaultPath(r.env.process))
	}
	if err != nil {
		return nil, &ConfigError{Msg: "invalid configuration", Err: err}
	}
	return r, nil
}

// Select builds the provider opts ask for and says which alias it used.
// Every error is a *ConfigError.
func Select(opts Options) (*Selection, error) {
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(opts.Provider)
	if _, configured := r.file.Providers[name]; !configured {
		name = strings.ToLower(name)
	}
	model := strings.TrimSpace(opts.Model)
	if name == "" && opts.Script != "" {
		name = Scripted
	}

	var alias *config.Model
	if m, ok := r.file.Models[model]; ok && model != "" {
		if name != "" && name != m.Provider {
			return nil, &ConfigError{Msg: fmt.Sprintf("--model %s is an alias of provider %s, not of %s", model, m.Provider, name)}
		}
		alias = &m
	} else if name == "" && model == "" {
		switch want := strings.TrimSpace(opts.ModelAlias); {
		case want != "":
			if m, ok := r.file.Models[want]; ok {
				alias = &m
			} else if r.isProvider(want) || strings.EqualFold(want, Scripted) {
				name = strings.ToLower(want) // an older agent naming a provider
				if _, ok := r.file.Providers[want]; ok {
					name = want
				}
			} else {
				return nil, &ConfigError{Msg: fmt.Sprintf("model %q is not a model alias (%s) nor a provider (%s)",
					want, r.aliasesText(), strings.Join(r.providerNames(), ", "))}
			}
		case r.file.DefaultModel != "":
			m := r.file.Models[r.file.DefaultModel]
			alias = &m
		}
	}

	if alias == nil && model != "" && name != Scripted {
		var err error
		if name, model, alias, err = r.rawModel(name, model); err != nil {
			return nil, err
		}
	}

	if name == Scripted {
		return r.scripted()
	}
	if alias != nil {
		name = alias.Provider
	}
	if name == "" {
		var keys []string
		for _, b := range Builtins() {
			for _, env := range b.APIKeyEnvs {
				if name == "" && r.getenv(env) != "" {
					name = b.Name
				}
			}
			keys = append(keys, b.APIKeyEnvs[0])
		}
		if name == "" {
			where := "a model alias in a configuration file"
			if r.file.Path != "" {
				where = "default_model in " + r.file.Path
			}
			return nil, &ConfigError{Msg: fmt.Sprintf("no provider configured: set %s or %s, define %s, or use --provider scripted --script FILE",
				strings.Join(keys[:len(keys)-1], ", "), keys[len(keys)-1], where), NoProvider: true}
		}
	}
	prov, ok := r.lookup(name)
	if !ok {
		return nil, &ConfigError{Msg: fmt.Sprintf("unknown provider %q (known: %s)", name, strings.Join(r.providerNames(), ", "))}
	}
	if opts.Script != "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("--script only applies to --provider scripted (the provider is %s)", prov.Name)}
	}
	if alias == nil && model == "" {
		model = r.getenvOf(prov.Type, func(b Builtin) string { return b.ModelEnv })
	}
	return r.build(prov, alias, model)
}

// rawModel resolves a --model that is not a model alias. PROVIDER/MODEL
// names a provider's model; with --provider, a plain name is a model of
// that provider; without, a plain name must be known: the model of an alias
// (that alias), or a built-in provider's default model (that provider).
// Anything else is refused, so that a typo never goes out as a model name.
func (r *resolver) rawModel(name, model string) (string, string, *config.Model, error) {
	if p, rest, ok := strings.Cut(model, "/"); ok && rest != "" && (name == "" || name == p) && r.isProvider(p) {
		if _, configured := r.file.Providers[p]; !configured {
			p = strings.ToLower(p)
		}
		return p, rest, nil, nil
	}
	if name != "" {
		return name, model, nil, nil
	}
	for _, a := range r.file.Aliases() {
		if m := r.file.Models[a]; m.Model == model {
			return "", model, &m, nil
		}
	}
	for _, b := range Builtins() {
		if b.Model == model {
			return b.Name, model, nil, nil
		}
	}
	return "", "", nil, &ConfigError{Msg: fmt.Sprintf("model %q is not a model alias (%s) nor a known model: name a provider's model as PROVIDER/MODEL (providers: %s)",
		model, r.aliasesText(), strings.Join(r.providerNames(), ", ")), Unknown: model, Known: r.modelNames()}
}

// modelNames are the names --model takes without a provider: the aliases,
// their models and the built-in providers' default models.
func (r *resolver) modelNames() []string {
	names := r.file.Aliases()
	for _, a := range r.file.Aliases() {
		if m := r.file.Models[a].Model; !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	for _, b := range Builtins() {
		if !slices.Contains(names, b.Model) {
			names = append(names, b.Model)
		}
	}
	return names
}

func (r *resolver) scripted() (*Selection, error) {
	if r.opts.Script == "" {
		return nil, &ConfigError{Msg: "provider scripted needs a script: use --script FILE"}
	}
	path := r.opts.Script
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.dir, path)
	}
	p, err := scripted.Load(path)
	if err != nil {
		return nil, &ConfigError{Msg: "scripted provider", Err: err}
	}
	return &Selection{Provider: p, ConfigPath: r.file.Path, Prices: r.file.PricesOf(nil, p.Model())}, nil
}

// lookup finds a provider: configured, else built-in.
func (r *resolver) lookup(name string) (config.Provider, bool) {
	if p, ok := r.file.Providers[name]; ok {
		return p, true
	}
	if _, ok := LookupBuiltin(name); ok {
		return config.Provider{Name: name, Type: name}, true
	}
	return config.Provider{}, false
}

func (r *resolver) isProvider(name string) bool {
	_, ok := r.lookup(name)
	if !ok {
		_, ok = r.lookup(strings.ToLower(name))
	}
	return ok
}

// providerNames lists the configured providers, then the built-in ones.
func (r *resolver) providerNames() []string {
	names := r.file.ProviderNames()
	for _, k := range Known() {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	return names
}

func (r *resolver) aliasesText() string {
	if r.file.Path == "" {
		return "no configuration file"
	}
	if len(r.file.Models) == 0 {
		return "no aliases in " + r.file.Path
	}
	return "aliases in " + r.file.Path + ": " + strings.Join(r.file.Aliases(), ", ")
}

// getenvOf reads a built-in variable of a provider type ("" for types
// without).
func (r *resolver) getenvOf(typ string, which func(Builtin) string) string {
	b, ok := LookupBuiltin(typ)
	if !ok || which(b) == "" {
		return ""
	}
	return r.getenv(which(b))
}

// apiKey is a provider's key as resolved.
type apiKey struct {
	value string
	// from is what authentication errors name: a variable, or the file's
	// api_key.
	from string
	// dotenv says the key was read from the work dir's .env.
	dotenv bool
}

// apiKey resolves a provider's key.
func (r *resolver) apiKey(p config.Provider) (apiKey, error) {
	fromVar := func(name string) apiKey {
		return apiKey{value: r.getenv(name), from: name, dotenv: r.env.inDotenv(name)}
	}
	if p.APIKeyEnv != "" {
		if v := r.getenv(p.APIKeyEnv); v != "" {
			return fromVar(p.APIKeyEnv), nil
		}
		return apiKey{}, &ConfigError{Msg: fmt.Sprintf("%s is not set (provider %s)", p.APIKeyEnv, p.Name)}
	}
	b, isBuiltin := LookupBuiltin(p.Type)
	if isBuiltin {
		for _, env := range b.APIKeyEnvs {
			if v := r.getenv(env); v != "" {
				return fromVar(env), nil
			}
		}
	}
	if p.APIKey != "" {
		return apiKey{value: p.APIKey, from: fmt.Sprintf("api_key of provider %s in %s", p.Name, r.file.Path)}, nil
	}
	if !isBuiltin { // openai-compatible: a local server may need no key
		return apiKey{from: fmt.Sprintf("api_key or api_key_env of provider %s in %s", p.Name, r.file.Path)}, nil
	}
	return apiKey{}, &ConfigError{Msg: fmt.Sprintf("%s is not set (provider %s)", b.KeyVars(), p.Name)}
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
