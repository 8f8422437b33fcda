// Package registry builds the chat provider the user asked for, from flags
// (Options) and the environment, including a .env file.
package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/joho/godotenv"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

// Options is what the user asked for.
type Options struct {
	// Provider is kimi, openai or scripted; empty picks the first of kimi
	// and openai whose API key is set (scripted when Script is set).
	Provider string
	// Model and BaseURL override {P}_MODEL_NAME and {P}_BASE_URL, which
	// override the provider's defaults.
	Model   string
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
}

// ConfigError is a configuration mistake of the user's: a missing key, an
// unknown provider, a bad script. A CLI maps it to exit status 2.
type ConfigError struct {
	Msg string
	Err error
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

// Known lists the provider names New accepts.
func Known() []string {
	var names []string
	for _, p := range openaicompat.Presets() {
		names = append(names, p.Name)
	}
	return append(names, Scripted)
}

// New builds the provider opts ask for. Every error is a *ConfigError.
func New(opts Options) (providers.ChatProvider, error) {
	dir := opts.WorkDir
	if dir == "" {
		dir = "."
	}
	getenv, err := environment(opts.Getenv, dir)
	if err != nil {
		return nil, err
	}

	name := strings.ToLower(strings.TrimSpace(opts.Provider))
	if name == "" && opts.Script != "" {
		name = Scripted
	}
	if name == "" {
		var keys []string
		for _, p := range openaicompat.Presets() {
			if getenv(p.APIKeyEnv) != "" {
				name = p.Name
				break
			}
			keys = append(keys, p.APIKeyEnv)
		}
		if name == "" {
			return nil, &ConfigError{Msg: fmt.Sprintf("no provider configured: set %s, or use --provider scripted --script FILE", strings.Join(keys, " or "))}
		}
	}

	if name == Scripted {
		if opts.Script == "" {
			return nil, &ConfigError{Msg: "provider scripted needs a script: use --script FILE"}
		}
		path := opts.Script
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		p, err := scripted.Load(path)
		if err != nil {
			return nil, &ConfigError{Msg: "scripted provider", Err: err}
		}
		return p, nil
	}

	preset, ok := openaicompat.LookupPreset(name)
	if !ok {
		return nil, &ConfigError{Msg: fmt.Sprintf("unknown provider %q (known: %s)", opts.Provider, strings.Join(Known(), ", "))}
	}
	if opts.Script != "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("--script only applies to --provider scripted (the provider is %s)", preset.Name)}
	}
	key := getenv(preset.APIKeyEnv)
	if key == "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("%s is not set (provider %s)", preset.APIKeyEnv, preset.Name)}
	}
	p, err := openaicompat.New(openaicompat.Config{
		Name:      preset.Name,
		BaseURL:   firstSet(opts.BaseURL, getenv(preset.BaseURLEnv), preset.BaseURL),
		APIKey:    key,
		APIKeyEnv: preset.APIKeyEnv,
		Model:     firstSet(opts.Model, getenv(preset.ModelEnv), preset.Model),
	})
	if err != nil {
		return nil, &ConfigError{Msg: "invalid configuration", Err: err}
	}
	return p, nil
}

// environment is getenv backed by dir/.env: the real environment wins.
func environment(getenv func(string) string, dir string) (func(string) string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	path := filepath.Join(dir, ".env")
	dotenv, err := godotenv.Read(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &ConfigError{Msg: "cannot read " + path, Err: err}
	}
	return func(k string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return strings.TrimSpace(dotenv[k])
	}, nil
}

func firstSet(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
