package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Source says which agent spec a command uses and how it was found.
type Source struct {
	// Path is the spec file (for the built-in default, its unpacked copy).
	Path string
	// Builtin is true for the built-in default agent.
	Builtin bool
	// Explicit is true when --agent named the file.
	Explicit bool
}

// String is what a banner shows: the file, or "built-in default".
func (s Source) String() string {
	if s.Builtin {
		return "built-in default"
	}
	return s.Path
}

// Candidates are the files looked up, in order, when --agent is not
// given: ./.kosong/agent.yaml, ./agent.yaml, then
// $XDG_CONFIG_HOME/kosong-host/agent.yaml (~/.config when XDG_CONFIG_HOME
// is unset). The built-in default agent comes after them.
func Candidates(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	out := []string{filepath.Join(".kosong", "agent.yaml"), "agent.yaml"}
	if dir := configDir(getenv); dir != "" {
		out = append(out, filepath.Join(dir, "kosong-host", "agent.yaml"))
	}
	return out
}

func configDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// LookupOrder describes Candidates and the built-in default, for messages.
func LookupOrder(getenv func(string) string) string {
	c := Candidates(getenv)
	for i, p := range c {
		if !filepath.IsAbs(p) {
			c[i] = "./" + filepath.ToSlash(p)
		}
	}
	return strings.Join(append(c, "the built-in default agent"), ", ")
}

// Find picks the agent spec: explicit (--agent) if given, else the first of
// Candidates that exists (relative ones in workDir), else the built-in
// default at builtinPath. An explicit file that does not exist is an error
// that names the lookup order used without --agent.
func Find(explicit, workDir, builtinPath string, getenv func(string) string) (Source, error) {
	if explicit != "" {
		st, err := os.Stat(explicit)
		switch {
		case err != nil:
			return Source{}, fmt.Errorf("Agent spec file not found: %s (given with --agent; without --agent kosong-host uses the first of %s)",
				explicit, LookupOrder(getenv))
		case st.IsDir():
			return Source{}, fmt.Errorf("Agent spec path is not a file: %s", explicit)
		}
		return Source{Path: explicit, Explicit: true}, nil
	}
	for _, p := range Candidates(getenv) {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(workDir, p)
		}
		if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
			return Source{Path: p}, nil
		}
	}
	if builtinPath == "" {
		return Source{}, fmt.Errorf("no agent spec found (looked for %s) and the built-in default agent is not available", LookupOrder(getenv))
	}
	return Source{Path: builtinPath, Builtin: true}, nil
}
