package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/suggest"
	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// Every mistyped name exits 2, with a "did you mean" when a known name is
// close: tools and plugins of the spec, --model, --provider, the tool of
// tools call and tools describe.

// checkPluginDirs: every --plugin-dir must be a directory.
func checkPluginDirs(dirs []string) error {
	for _, d := range dirs {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			return exitCode(2, fmt.Errorf("--plugin-dir %s: no such directory", d))
		case !fi.IsDir():
			return exitCode(2, fmt.Errorf("--plugin-dir %s: not a directory", d))
		}
	}
	return nil
}

var pluginNotFound = regexp.MustCompile(`plugin ([A-Za-z0-9_.-]+): kosong-plugin-[A-Za-z0-9_.-]+ not found`)

// pluginHint adds "did you mean" to a load error naming a plugin that was
// not found, from the built-in plugins and the kosong-plugin-NAME binaries
// in dirs.
func pluginHint(err error, dirs []string) error {
	if err == nil {
		return nil
	}
	m := pluginNotFound.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	known := builtinNames()
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if name, ok := strings.CutPrefix(e.Name(), "kosong-plugin-"); ok && !slices.Contains(known, name) {
				known = append(known, name)
			}
		}
	}
	if hint := suggest.Hint(m[1], known); hint != "" {
		return fmt.Errorf("%w%s", err, hint)
	}
	return err
}

// checkModelAndProvider rejects a --provider that is not a provider, and
// a --model close to a model alias of the configuration without being one
// (`--model sonet` when `sonnet` is an alias), which would otherwise be sent
// to the provider as a model name.
func checkModelAndProvider(f *runFlags) error {
	file, err := loadConfigFile(f.config)
	if err != nil {
		return nil // registry.Select reports it
	}
	if p := strings.TrimSpace(f.provider); p != "" {
		known := append(registry.Known(), file.ProviderNames()...)
		if !slices.Contains(known, p) && !slices.Contains(known, strings.ToLower(p)) {
			return exitCode(2, fmt.Errorf("unknown provider %q (known: %s)%s", p, strings.Join(known, ", "), suggest.Hint(p, known)))
		}
	}
	if m := strings.TrimSpace(f.model); m != "" {
		aliases := file.Aliases()
		if !slices.Contains(aliases, m) {
			if s := suggest.Closest(m, aliases); s != "" {
				return exitCode(2, fmt.Errorf("--model %s is not a model alias (did you mean %s?); aliases: %s", m, s, strings.Join(aliases, ", ")))
			}
		}
	}
	return nil
}

// loadConfigFile reads the configuration file of --config, else the
// default one if present.
func loadConfigFile(path string) (*config.File, error) {
	if path != "" {
		return config.Load(filepath.Clean(path))
	}
	f, _, err := config.LoadOptional(config.DefaultPath(os.Getenv))
	if f == nil {
		f = &config.File{}
	}
	return f, err
}

// toolNotFound is the exit-2 error of tools describe and tools call for a
// tool the agent does not have.
func toolNotFound(name, agentPath string, known []string) error {
	return exitCode(2, fmt.Errorf("Tool `%s` not found in %s%s (tools: %s)", name, agentPath, suggest.Hint(name, known), strings.Join(known, ", ")))
}
