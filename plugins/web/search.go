package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// The search service contract. SearchWeb talks to any service that speaks
// it, configured by the tool reference's config block in agent.yaml:
//
//	tools:
//	  - plugin: web
//	    tools: [SearchWeb]
//	    config:
//	      endpoint: https://search.example.com/v1/search
//	      api_key_env: SEARCH_API_KEY   # optional
//	    env: [SEARCH_API_KEY]           # plugins get a minimal environment
//
// Without config.endpoint the tool is skipped. With api_key_env set, the
// variable it names must be set in the plugin's environment, so it must also
// be listed in the reference's env; the tool fails to load otherwise.
//
// Request: POST endpoint, Content-Type application/json, body
// {"query": string, "limit": int (1..20), "include_content": bool}, with
// "Authorization: Bearer KEY" when api_key_env is set.
//
// Response: 200 with JSON {"results": [{"title": string, "url": string,
// "snippet": string, "content": string (optional, when include_content)}]}.
// Any other status is an error; results beyond limit are dropped.

// searchConfig is SearchWeb's config block.
type searchConfig struct {
	Endpoint  string `json:"endpoint"`
	APIKeyEnv string `json:"api_key_env"`
}

type searchRequest struct {
	Query          string `json:"query"`
	Limit          int    `json:"limit"`
	IncludeContent bool   `json:"include_content"`
}

type searchResponse struct {
	Results []searchResult `json:"results"`
}

type searchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Content string `json:"content,omitempty"`
}

// SearchParams are SearchWeb's arguments.
type SearchParams struct {
	Query          string `json:"query" minLength:"1" jsonschema:"What to search for."`
	Limit          int    `json:"limit,omitempty" default:"5" minimum:"1" maximum:"20" jsonschema:"How many results to return, 1 to 20 (default 5)."`
	IncludeContent bool   `json:"include_content,omitempty" default:"false" jsonschema:"Also return the content of each result's page (much longer output)."`
}

// SearchWeb queries the configured search service.
type SearchWeb struct {
	opts     options
	endpoint string
	apiKey   string
}

// newSearchWeb skips the tool when no search service is configured.
func newSearchWeb(cfg pluginsdk.Config, o options) (*SearchWeb, error) {
	var c searchConfig
	if err := cfg.Decode(&c); err != nil {
		return nil, fmt.Errorf("invalid SearchWeb config: %w", err)
	}
	if strings.TrimSpace(c.Endpoint) == "" {
		return nil, pluginsdk.Skip("no search service configured (set config.endpoint in agent.yaml)")
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("SearchWeb config.endpoint %q is not an http(s) URL", c.Endpoint)
	}
	s := &SearchWeb{opts: o, endpoint: u.String()}
	if c.APIKeyEnv != "" {
		s.apiKey = os.Getenv(c.APIKeyEnv)
		if s.apiKey == "" {
			return nil, fmt.Errorf("SearchWeb config.api_key_env names %s, which is not set in the plugin's environment "+
				"(plugins get a minimal environment: list %s in the tool's env in agent.yaml)", c.APIKeyEnv, c.APIKeyEnv)
		}
	}
	return s, nil
}

// Call runs the search.
func (t *SearchWeb) Call(ctx context.Context, p SearchParams) pluginsdk.Result {
	if strings.TrimSpace(p.Query) == "" {
		return pluginsdk.Error("The query is empty.").WithBrief("Empty query")
	}
	limit := p.Limit
	if limit == 0 {
		limit = 5
	}
	if limit < 1 || limit > 20 {
		return pluginsdk.Error(fmt.Sprintf("limit must be between 1 and 20, got %d.", limit)).WithBrief("Invalid limit")
	}
	body, _ := json.Marshal(searchRequest{Query: p.Query, Limit: limit, IncludeContent: p.IncludeContent})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot build the search request: %v", err)).WithBrief("Search failed")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := t.opts.client.Do(req)
	if err != nil {
		r := requestError(ctx, "the search service", t.opts.client, err)
		return r.WithMessage(strings.Replace(r.Message, "Failed to fetch", "Failed to reach", 1)).WithBrief("Search failed")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.maxBytes))
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot read the search service's answer: %v", err)).WithBrief("Search failed")
	}
	if resp.StatusCode != http.StatusOK {
		detail := strings.TrimSpace(strings.ToValidUTF8(string(data[:min(len(data), 300)]), ""))
		if detail != "" {
			detail = ": " + detail
		}
		return pluginsdk.Error(fmt.Sprintf("The search service answered HTTP %s%s", resp.Status, detail)).
			WithBrief(fmt.Sprintf("HTTP %d", resp.StatusCode))
	}
	var sr searchResponse
	if err := json.Unmarshal(data, &sr); err != nil {
		return pluginsdk.Error(fmt.Sprintf("The search service's answer is not the expected JSON: %v", err)).WithBrief("Search failed")
	}
	results := sr.Results[:min(len(sr.Results), limit)]
	if len(results) == 0 {
		return pluginsdk.Ok("").WithMessage("No results found.").WithBrief("No results")
	}
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n---\n\n")
		}
		fmt.Fprintf(&b, "Title: %s\nURL: %s\n", oneLine(r.Title), oneLine(r.URL))
		if s := strings.TrimSpace(r.Snippet); s != "" {
			fmt.Fprintf(&b, "Summary: %s\n", s)
		}
		if c := strings.TrimSpace(r.Content); p.IncludeContent && c != "" {
			fmt.Fprintf(&b, "\n%s\n", c)
		}
	}
	return pluginsdk.Ok(strings.ToValidUTF8(b.String(), "\uFFFD")).
		WithMessage(fmt.Sprintf("%d results for %q.", len(results), p.Query)).
		WithBrief(fmt.Sprintf("%d results", len(results)))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
