package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// newSetupCmd is `kosong-host setup`: the first-run questions that write
// the configuration file.
func newSetupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Configure a model provider: choose one, paste its API key, pick a model",
		Long: `Ask for a model provider (kimi, openai, anthropic, google, or an
OpenAI-compatible server with its base URL), its API key (read without
echo) and a model, and write them to the configuration file
($XDG_CONFIG_HOME/kosong-host/config.yaml, else
~/.config/kosong-host/config.yaml) with mode 0600: the provider, the model
as an alias, and default_model. An existing file is never overwritten.
kosong-host run (or kosong-host alone) in a terminal asks the same when no
provider is configured.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			stdin, out := cmd.InOrStdin(), cmd.ErrOrStderr()
			if !isTerminal(stdin) {
				return exitCode(2, errors.New("setup asks questions and reads the API key without echo: run kosong-host setup in a terminal, or write the configuration file yourself (docs/configuration.md)"))
			}
			path, err := setup(stdin.(*os.File), out)
			if err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintf(out, "Start a session with kosong-host (configuration: %s).\n", path)
			return nil
		},
	}
}

// firstRun reports whether a run has nothing that chooses a provider: no
// flag, no configuration file that names a default, no API key.
func firstRun(f *runFlags, workDir string, dotenvTrusted bool) bool {
	if f.provider != "" || f.model != "" || f.script != "" || f.config != "" || f.baseURL != "" {
		return false
	}
	_, err := registry.Select(registry.Options{WorkDir: workDir, IgnoreDotEnv: !dotenvTrusted})
	var ce *registry.ConfigError
	return errors.As(err, &ce) && ce.NoProvider
}

// setupHint adds the command that sets a provider up to the error of a
// run that has none.
func setupHint(err error) error {
	var ce *registry.ConfigError
	if !errors.As(err, &ce) || !ce.NoProvider {
		return err
	}
	return errors.New(strings.Replace(err.Error(), "no provider configured: ",
		"no provider configured: run `kosong-host setup` in a terminal, or ", 1))
}

// setupChoice is a provider setup offers.
type setupChoice struct {
	typ, model, keyVars, baseURL string
}

func setupChoices() []setupChoice {
	var out []setupChoice
	for _, b := range registry.Builtins() {
		out = append(out, setupChoice{typ: b.Name, model: b.Model, keyVars: b.KeyVars(), baseURL: b.BaseURL})
	}
	return append(out, setupChoice{typ: config.TypeOpenAICompatible})
}

// setupProvider and setupModel are the entries setup writes.
type setupProvider struct {
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url,omitempty"`
	APIKey  string `yaml:"api_key,omitempty"`
}

type setupModel struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
}

type setupFile struct {
	DefaultModel string                   `yaml:"default_model"`
	Providers    map[string]setupProvider `yaml:"providers"`
	Models       map[string]setupModel    `yaml:"models"`
}

// readSecret shows prompt and reads a line from the terminal in without
// echo. Echo is off before the prompt is shown, so a key pasted the moment
// the prompt appears is never shown either.
func readSecret(in *os.File, out io.Writer, prompt string) (string, error) {
	fd := int(in.Fd())
	st, err := term.MakeRaw(fd)
	if err != nil {
		return "", err
	}
	defer term.Restore(fd, st)
	line, err := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "").ReadPassword(prompt)
	fmt.Fprint(out, "\r\n")
	return line, err
}

// setup asks for a provider, its key (without echo) and a model on the
// terminal in, and writes the default configuration file, mode 0600. It
// returns the file's path.
func setup(in *os.File, out io.Writer) (string, error) {
	path := config.DefaultPath(os.Getenv)
	if path == "" {
		return "", errors.New("setup: neither XDG_CONFIG_HOME nor HOME is set: there is no place for the configuration file")
	}
	if _, err := os.Stat(path); err == nil {
		return "", fmt.Errorf("setup: %s exists and is kept: edit it (docs/configuration.md), or move it away and run kosong-host setup again", path)
	}
	choices := setupChoices()
	fmt.Fprintf(out, "No model provider is configured yet. Setting one up writes %s.\n", path)
	for i, c := range choices {
		note := "default model " + c.model
		if c.typ == config.TypeOpenAICompatible {
			note = "any server of the OpenAI API, at a base URL you give"
		}
		fmt.Fprintf(out, "  %d  %-18s %s\n", i+1, c.typ, note)
	}
	var c setupChoice
	for {
		line, err := askLine(in, out, fmt.Sprintf("Provider [1-%d]: ", len(choices)))
		if err != nil {
			return "", err
		}
		n, err := strconv.Atoi(line)
		if err == nil && n >= 1 && n <= len(choices) {
			c = choices[n-1]
			break
		}
		for _, ch := range choices {
			if ch.typ == strings.ToLower(line) {
				c = ch
			}
		}
		if c.typ != "" {
			break
		}
		fmt.Fprintf(out, "%q is not one of them: type a number from 1 to %d.\n", line, len(choices))
	}
	name, prov := c.typ, setupProvider{Type: c.typ}
	if c.typ == config.TypeOpenAICompatible {
		name = "custom"
		for prov.BaseURL == "" {
			line, err := askLine(in, out, "Base URL (e.g. http://127.0.0.1:8000/v1): ")
			if err != nil {
				return "", err
			}
			prov.BaseURL = line
		}
	}
	keyNote := "empty if the server needs none"
	if c.keyVars != "" {
		keyNote = "or leave it empty and set " + c.keyVars
	}
	key, err := readSecret(in, out, fmt.Sprintf("API key (%s; it is not shown as you paste it): ", keyNote))
	if err != nil {
		return "", fmt.Errorf("setup: reading the API key: %w", err)
	}
	prov.APIKey = strings.TrimSpace(key)
	model := ""
	for model == "" {
		q := "Model: "
		if c.model != "" {
			q = fmt.Sprintf("Model [%s]: ", c.model)
		}
		line, err := askLine(in, out, q)
		if err != nil {
			return "", err
		}
		model = line
		if model == "" {
			model = c.model
		}
	}
	doc := setupFile{DefaultModel: model, Providers: map[string]setupProvider{name: prov},
		Models: map[string]setupModel{model: {Provider: name, Model: model}}}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	if _, err := config.Parse(path, data); err != nil {
		return "", fmt.Errorf("setup: nothing written: %w", err)
	}
	if err := writeNew(path, data); err != nil {
		return "", fmt.Errorf("setup: %w", err)
	}
	fmt.Fprintf(out, "Wrote %s (mode 0600): provider %s, model %s (the default; `kosong-host models` lists it).\n", path, name, model)
	return path, nil
}

// askLine prints q and reads one line, a byte at a time so that nothing after
// it is taken from the terminal; end of input is an error.
func askLine(in io.Reader, out io.Writer, q string) (string, error) {
	fmt.Fprint(out, q)
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 4096 {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				return strings.TrimSpace(b.String()), nil
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			return "", errors.New("setup: input ended before the answers; nothing written")
		}
		if err != nil {
			return "", fmt.Errorf("setup: %w", err)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// writeNew writes a file that must not exist yet, readable by its owner
// only (it holds an API key); its folder is made 0700 if missing.
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s appeared meanwhile and is kept", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
