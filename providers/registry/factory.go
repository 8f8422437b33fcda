package registry

import (
	"fmt"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// Settings is what the selection resolved for one provider, in the terms
// of the configuration; the factory of the provider's type turns it into
// the provider, computing that provider's own options (Anthropic's
// thinking budget, the max_tokens field OpenAI wants...).
type Settings struct {
	// Provider is the configured provider, or a built-in one (only Name
	// and Type set).
	Provider config.Provider
	// Alias is the model alias used; nil when none.
	Alias *config.Model
	// Model is the model name sent.
	Model   string
	BaseURL string
	APIKey  string
	// KeyFrom is what authentication errors name: a variable, or the
	// file's api_key.
	KeyFrom  string
	Timeouts timeouts.Timeouts
}

// MaxTokens is the alias's max_tokens (0: the provider's default).
func (s Settings) MaxTokens() int {
	if s.Alias == nil {
		return 0
	}
	return s.Alias.MaxTokens
}

// Has reports whether the alias lists the capability.
func (s Settings) Has(capability string) bool { return s.Alias != nil && s.Alias.Has(capability) }

// NoImageInput reports an alias that declares capabilities without
// image_in: images in the history go to it as a text placeholder.
func (s Settings) NoImageInput() bool { return s.Alias != nil && s.Alias.Lacks(config.CapImageIn) }

// Factory builds the provider of one type.
type Factory func(Settings) (providers.ChatProvider, error)

// factories holds one factory per provider type.
var factories = map[string]Factory{
	config.TypeKimi:             newOpenAICompatible,
	config.TypeOpenAI:           newOpenAICompatible,
	config.TypeOpenAICompatible: newOpenAICompatible,
	config.TypeAnthropic:        newAnthropic,
	config.TypeGoogle:           newGoogle,
}

// timeoutsOf resolves the waits: --stream-idle-timeout, else the alias's,
// else the provider's, else the defaults.
func (r *resolver) timeoutsOf(p config.Provider, alias *config.Model) timeouts.Timeouts {
	t := p.Timeouts
	if alias != nil {
		t = alias.Timeouts.Over(p.Timeouts)
	}
	if r.opts.StreamIdleTimeout > 0 {
		t.StreamIdle = r.opts.StreamIdleTimeout
	}
	return timeouts.Timeouts{Connect: t.Connect, StreamIdle: t.StreamIdle}.Resolved()
}

// build resolves the settings of provider p and makes it with its type's
// factory; model is the model name when there is no alias.
func (r *resolver) build(p config.Provider, alias *config.Model, model string) (*Selection, error) {
	key, err := r.apiKey(p)
	if err != nil {
		return nil, err
	}
	b, _ := LookupBuiltin(p.Type)
	base, source, warning := r.baseURL(p, key)
	s := Settings{Provider: p, Alias: alias, APIKey: key.value, KeyFrom: key.from, Timeouts: r.timeoutsOf(p, alias), BaseURL: base}
	sel := &Selection{ConfigPath: r.file.Path, Timeouts: s.Timeouts, BaseURL: base, BaseURLSource: source}
	if warning != "" {
		sel.Warnings = append(sel.Warnings, warning)
	}
	if alias != nil {
		model = alias.Model
		sel.Alias, sel.MaxContextSize, sel.Capabilities = alias.Alias, alias.MaxContextSize, alias.Capabilities
		sel.CapabilitiesDeclared = alias.CapabilitiesDeclared
	}
	if s.Model = firstSet(model, b.Model); s.Model == "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("provider %s has no default model: use --model NAME or a model alias", p.Name)}
	}
	factory, ok := factories[p.Type]
	if !ok {
		return nil, &ConfigError{Msg: "invalid configuration", Err: fmt.Errorf("unknown provider type %q", p.Type)}
	}
	if sel.Provider, err = factory(s); err != nil {
		return nil, &ConfigError{Msg: "invalid configuration", Err: err}
	}
	sel.Prices = r.file.PricesOf(alias, s.Model)
	return sel, nil
}
