package registry

import (
	"github.com/kosong-host/kosong-host/providers/config"
)

// Overview is what is configured: the configuration file's providers and
// aliases, and the built-in providers, with whether their keys are set. It
// is what `kosong-host models` shows.
type Overview struct {
	// ConfigPath is the configuration file ("" when no path applies);
	// ConfigFound says whether it exists.
	ConfigPath   string
	ConfigFound  bool
	DefaultModel string
	Providers    []ProviderStatus
	Models       []ModelStatus
	Builtins     []BuiltinStatus
}

// ProviderStatus is a configured provider.
type ProviderStatus struct {
	Name    string
	Type    string
	BaseURL string // as configured ("" for the type's default)
	// KeyFrom says where the key comes from (a variable, or the file's
	// api_key) when one is set; Missing is the error when a key is needed
	// and not set. Both are empty for an openai-compatible provider
	// without key.
	KeyFrom string
	Missing string
}

// ModelStatus is a model alias.
type ModelStatus struct {
	Entry   config.Model
	Default bool
	// Missing is the error when the provider's key is not set.
	Missing string
}

// BuiltinStatus is a built-in provider.
type BuiltinStatus struct {
	Builtin
	// KeySet names the variable holding the key ("" when none is set).
	KeySet string
	// Configured says a configured provider of the same name replaces it.
	Configured bool
}

// Describe reports what opts would have to choose from. Its errors are
// *ConfigError (an unreadable .env or configuration file).
func Describe(opts Options) (*Overview, error) {
	r, err := newResolver(opts)
	if err != nil {
		return nil, err
	}
	ov := &Overview{ConfigPath: r.file.Path, DefaultModel: r.file.DefaultModel}
	if opts.ConfigPath != "" {
		ov.ConfigFound = true
	} else if ov.ConfigPath != "" {
		_, ov.ConfigFound, _ = config.LoadOptional(ov.ConfigPath)
	}
	status := map[string]ProviderStatus{}
	for _, name := range r.file.ProviderNames() {
		p := r.file.Providers[name]
		st := ProviderStatus{Name: name, Type: p.Type, BaseURL: p.BaseURL}
		if key, err := r.apiKey(p); err != nil {
			st.Missing = err.Error()
		} else if key.value != "" {
			st.KeyFrom = key.from
		}
		status[name] = st
		ov.Providers = append(ov.Providers, st)
	}
	for _, b := range Builtins() {
		st := BuiltinStatus{Builtin: b}
		_, st.Configured = r.file.Providers[b.Name]
		for _, env := range b.APIKeyEnvs {
			if st.KeySet == "" && r.getenv(env) != "" {
				st.KeySet = env
			}
		}
		ov.Builtins = append(ov.Builtins, st)
		if _, ok := status[b.Name]; !ok {
			ps := ProviderStatus{Name: b.Name, Type: b.Name}
			if st.KeySet == "" {
				ps.Missing = b.KeyVars() + " is not set (provider " + b.Name + ")"
			}
			status[b.Name] = ps
		}
	}
	for _, alias := range r.file.Aliases() {
		m := r.file.Models[alias]
		ov.Models = append(ov.Models, ModelStatus{Entry: m, Default: alias == r.file.DefaultModel, Missing: status[m.Provider].Missing})
	}
	return ov, nil
}
