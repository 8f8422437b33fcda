// Package web holds the web tools: FetchURL (fetch a URL as text, HTML
// turned into Markdown) and SearchWeb (query a search service configured in
// agent.yaml).
package web

import (
	"embed"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed *.md
var descriptions embed.FS

const (
	defaultTimeout  = 30 * time.Second
	defaultMaxBytes = 10 << 20
	maxRedirects    = 10
	userAgent       = "Mozilla/5.0 (compatible; kosong-host/0.1; +https://github.com/kosong-host/kosong-host)"
)

// options are what the tools share and tests replace: the HTTP client
// (its Timeout is the request timeout) and the cap on a body's size.
type options struct {
	client   *http.Client
	maxBytes int64
}

// newClient returns an HTTP client with the given timeout that follows at
// most maxRedirects redirects, and only to http(s) URLs.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return errors.New("redirected to a URL that is not http or https: " + req.URL.String())
			}
			return nil
		},
	}
}

// newDefinitions declares the tools with the given options.
func newDefinitions(o options) []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[FetchParams]("FetchURL", "Fetch a URL as text.",
			func(cfg pluginsdk.Config) (*FetchURL, error) { return newFetchURL(cfg, o) },
			pluginsdk.ReadOnly(), pluginsdk.OpenWorld(),
			pluginsdk.WithRuleArgument("url"),
			pluginsdk.WithTimeout(o.client.Timeout+5*time.Second),
			pluginsdk.WithDescriptionFile(descriptions, "fetch_url.md", map[string]any{
				"Timeout": o.client.Timeout, "MaxMB": o.maxBytes >> 20,
			})),
		pluginsdk.NewTool[SearchParams]("SearchWeb", "Search the web.",
			func(cfg pluginsdk.Config) (*SearchWeb, error) { return newSearchWeb(cfg, o) },
			pluginsdk.ReadOnly(), pluginsdk.OpenWorld(),
			pluginsdk.WithTimeout(o.client.Timeout+5*time.Second),
			pluginsdk.WithDescriptionFile(descriptions, "search_web.md", nil)),
	}
}

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	return newDefinitions(options{client: newClient(defaultTimeout), maxBytes: defaultMaxBytes})
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-web).
func Tools() []pluginsdk.Definition { return definitions() }
