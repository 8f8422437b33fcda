package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/joho/godotenv"

	"github.com/kosong-host/kosong-host/providers/config"
)

// environment holds the variables a selection reads: the process
// environment, then the work dir's .env file for what it leaves unset.
type environment struct {
	// process reads the process environment (Options.Getenv).
	process func(string) string
	// dotenv holds the variables of the .env file at path (nil when there
	// is none).
	dotenv map[string]string
	path   string
}

// readEnvironment reads dir/.env, if present and not ignored (an untrusted
// folder's); getenv defaults to os.Getenv.
func readEnvironment(getenv func(string) string, dir string, ignoreDotEnv bool) (*environment, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	e := &environment{process: getenv, path: filepath.Join(dir, ".env")}
	if abs, err := filepath.Abs(e.path); err == nil {
		e.path = abs
	}
	if ignoreDotEnv {
		return e, nil
	}
	dotenv, err := godotenv.Read(e.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &ConfigError{Msg: "cannot read " + e.path, Err: err}
	}
	e.dotenv = dotenv
	return e, nil
}

// get reads variable k: the environment wins over .env.
func (e *environment) get(k string) string {
	if v := strings.TrimSpace(e.process(k)); v != "" {
		return v
	}
	return strings.TrimSpace(e.dotenv[k])
}

// inDotenv reports whether get(k) is the value of the .env file.
func (e *environment) inDotenv(k string) bool {
	return strings.TrimSpace(e.process(k)) == "" && strings.TrimSpace(e.dotenv[k]) != ""
}

// baseURL resolves a provider's base URL: --base-url, else the built-in
// variable of its type ({T}_BASE_URL), else the file's base_url, else the
// type's default. A base URL from .env is taken only with a key from the
// same .env: a repository's .env must not send the user's own key (from
// the environment or the configuration file) to a server of its choosing.
// Otherwise it is ignored, with a warning. source says where a base URL
// other than the default came from ("" for the default).
func (r *resolver) baseURL(p config.Provider, key apiKey) (base, source, warning string) {
	b, _ := LookupBuiltin(p.Type)
	if v := strings.TrimSpace(r.opts.BaseURL); v != "" {
		return v, "the --base-url flag", ""
	}
	if name := b.BaseURLEnv; name != "" {
		switch v := r.getenv(name); {
		case v == "":
		case !r.env.inDotenv(name):
			return v, "environment variable " + name, ""
		case key.dotenv:
			return v, name + " in " + r.env.path, ""
		default:
			warning = fmt.Sprintf("ignoring %s in %s: the key of provider %s (%s) is not from that file, and a key goes only to a base URL set beside it",
				name, r.env.path, p.Name, keyOrigin(key))
		}
	}
	if v := strings.TrimSpace(p.BaseURL); v != "" {
		return v, fmt.Sprintf("base_url of provider %s in %s", p.Name, r.file.Path), warning
	}
	return b.BaseURL, "", warning
}

// keyOrigin says where a key came from, for messages.
func keyOrigin(key apiKey) string {
	if strings.Contains(key.from, " ") { // the file's api_key
		return key.from
	}
	return key.from + " from the environment"
}

// BaseURLNote is the line the banner and a one-shot run's stderr show when
// the provider's base URL is not its default: which URL, and where it came
// from. It is "" for the default base URL (and for the scripted provider).
// Credentials in the URL are masked.
func (s *Selection) BaseURLNote() string {
	if s.BaseURLSource == "" {
		return ""
	}
	shown := s.BaseURL
	if u, err := url.Parse(shown); err == nil {
		shown = u.Redacted()
	}
	return fmt.Sprintf("provider %s: base URL %s (from %s)", s.Provider.Name(), shown, s.BaseURLSource)
}

// Notes are the lines to show on stderr before a run starts (in the
// banner, and on stderr with -p): each warning as "warning: ...", then the
// BaseURLNote when there is one.
func (s *Selection) Notes() []string {
	var out []string
	for _, w := range s.Warnings {
		out = append(out, "warning: "+w)
	}
	if n := s.BaseURLNote(); n != "" {
		out = append(out, n)
	}
	return out
}
