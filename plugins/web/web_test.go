package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

const page = `<!DOCTYPE html>
<html><head><title>  The   Page </title><style>body { color: red }</style><script>alert("x")</script></head>
<body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<h1>Heading</h1>
<p>Some <strong>bold</strong> text and a <a href="/docs/intro">relative link</a>.</p>
<ul><li>one</li><li>two</li></ul>
<pre><code>x := 1</code></pre>
<footer>Copyright</footer>
</body></html>`

// testServer serves the cases FetchURL is tested against.
func testServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(testMux())
	t.Cleanup(srv.Close)
	return srv
}

// testMux serves the cases FetchURL is tested against.
func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name": "kosong", "tools": [1, 2]}`)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "just text\n")
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no Content-Type: sniffed
		io.WriteString(w, "<html><body><p>sniffed html</p></body></html>")
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusFound)
	})
	mux.HandleFunc("/redirect-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/file", http.StatusFound)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("012345678\n", 1000)) // 10,000 bytes
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the client gives up
	})
	return mux
}

func newHarness(t *testing.T, o options, opts plugintest.Options) *plugintest.Harness {
	return plugintest.New(t, opts, newDefinitions(o)...)
}

// allowLocal lets FetchURL reach the test servers on 127.0.0.1.
// (FetchURL alone: SearchWeb skips without a config.)
var allowLocal = plugintest.Options{Tools: []string{"FetchURL"}, Configs: map[string]string{"FetchURL": `{"allow_private_addresses": true}`}}

func TestFetchURL(t *testing.T) {
	srv := testServer(t)
	h := newHarness(t, options{client: newClient(5 * time.Second), maxBytes: 4096}, allowLocal)
	tests := []struct {
		name     string
		url      string
		kind     pluginsdk.ResultKind
		contains []string // in the output
		absent   []string // not in the output
		message  string   // substring
	}{
		{"HTML to Markdown", srv.URL + "/page", pluginsdk.KindOk,
			[]string{"# Heading", "**bold**", "[relative link](" + srv.URL + "/docs/intro)", "- one\n- two", "x := 1"},
			[]string{"alert", "color: red", "Home", "Copyright", "<p>"}, "converted to Markdown. Title: The Page"},
		{"charset converted", srv.URL + "/latin1", pluginsdk.KindOk, []string{"café"}, nil, "text/html"},
		{"JSON passed through", srv.URL + "/data.json", pluginsdk.KindOk, []string{`{"name": "kosong", "tools": [1, 2]}`}, nil, "application/json"},
		{"plain text passed through", srv.URL + "/plain", pluginsdk.KindOk, []string{"just text\n"}, nil, "text/plain, 10 bytes"},
		{"content type sniffed", srv.URL + "/untyped", pluginsdk.KindOk, []string{"sniffed html"}, []string{"<p>"}, "text/html"},
		{"redirect followed", srv.URL + "/redirect", pluginsdk.KindOk, []string{"just text"}, nil,
			"Fetched " + srv.URL + "/plain (text/plain, 10 bytes). Redirected from " + srv.URL + "/redirect."},
		{"404", srv.URL + "/missing", pluginsdk.KindError, nil, nil, "Failed to fetch " + srv.URL + "/missing: HTTP 404 Not Found."},
		{"oversized body cut", srv.URL + "/big", pluginsdk.KindOk, []string{"012345678\n"}, nil, "only its first 4096 bytes were read"},
		{"binary refused", srv.URL + "/image.png", pluginsdk.KindError, nil, nil, "is image/png content, not text"},
		{"non-http scheme", "ftp://example.com/file", pluginsdk.KindError, nil, nil, "Only http and https URLs can be fetched"},
		{"file scheme", "file:///etc/passwd", pluginsdk.KindError, nil, nil, "Only http and https URLs can be fetched"},
		{"redirect to another scheme", srv.URL + "/redirect-ftp", pluginsdk.KindError, nil, nil, "not http or https"},
		{"no host", "http:///path", pluginsdk.KindError, nil, nil, "has no host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "FetchURL", fmt.Sprintf(`{"url": %q}`, tt.url))
			if got.Kind != tt.kind || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v", got)
			}
			for _, s := range tt.contains {
				if !strings.Contains(got.Text(), s) {
					t.Errorf("output lacks %q:\n%s", s, got.Text())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(got.Text(), s) {
					t.Errorf("output has %q:\n%s", s, got.Text())
				}
			}
			if tt.name == "oversized body cut" && len(got.Text()) != 4096 {
				t.Errorf("read %d bytes, want 4096", len(got.Text()))
			}
		})
	}
}

func TestFetchURLTimeout(t *testing.T) {
	srv := testServer(t)
	h := newHarness(t, options{client: newClient(100 * time.Millisecond), maxBytes: 4096}, allowLocal)
	got := h.MustCall(t, "FetchURL", fmt.Sprintf(`{"url": %q}`, srv.URL+"/slow"))
	if got.Kind != pluginsdk.KindError || got.Message != fmt.Sprintf("Fetching %s/slow timed out after 100ms.", srv.URL) {
		t.Fatalf("got %+v", got)
	}
}

// searchServer is a search service following the contract; it records the
// requests it gets.
func searchServer(t *testing.T, reqs chan<- *http.Request, bodies chan<- searchRequest) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req searchRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		reqs <- r
		bodies <- req
		switch req.Query {
		case "fail":
			http.Error(w, "quota exceeded", http.StatusTooManyRequests)
			return
		case "garbage":
			io.WriteString(w, "<html>")
			return
		case "nothing":
			io.WriteString(w, `{"results": []}`)
			return
		}
		var resp searchResponse
		for i := range 30 {
			resp.Results = append(resp.Results, searchResult{
				Title: fmt.Sprintf("Result\n%d", i+1), URL: fmt.Sprintf("https://example.com/%d", i+1),
				Snippet: "snippet " + req.Query, Content: fmt.Sprintf("content %d", i+1),
			})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSearchWebLoad(t *testing.T) {
	t.Setenv("KOSONG_TEST_SEARCH_KEY", "")
	o := options{client: newClient(5 * time.Second), maxBytes: 1 << 20}
	tests := []struct {
		name   string
		config string
		status plugintest.Status
		reason string
	}{
		{"no config", "", plugintest.Skipped, "no search service configured (set config.endpoint in agent.yaml)"},
		{"no endpoint", `{"api_key_env": "X"}`, plugintest.Skipped, "no search service configured (set config.endpoint in agent.yaml)"},
		{"bad endpoint", `{"endpoint": "ftp://x"}`, plugintest.Failed, `SearchWeb config.endpoint "ftp://x" is not an http(s) URL`},
		{"key variable not set", `{"endpoint": "http://localhost:1/search", "api_key_env": "KOSONG_TEST_SEARCH_KEY"}`, plugintest.Failed,
			"SearchWeb config.api_key_env names KOSONG_TEST_SEARCH_KEY, which is not set in the plugin's environment (plugins get a minimal environment: list KOSONG_TEST_SEARCH_KEY in the tool's env in agent.yaml)"},
		{"configured", `{"endpoint": "http://localhost:1/search"}`, plugintest.Loaded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, loads := plugintest.Load(t, plugintest.Options{Configs: map[string]string{"SearchWeb": tt.config}}, newDefinitions(o)...)
			got := map[string]plugintest.ToolLoad{}
			for _, l := range loads {
				got[l.Name] = l
			}
			if s := got["SearchWeb"]; s.Status != tt.status || s.Reason != tt.reason {
				t.Fatalf("load = %v %q", s.Status, s.Reason)
			}
			if got["FetchURL"].Status != plugintest.Loaded {
				t.Fatal("FetchURL did not load")
			}
		})
	}
}

func TestSearchWeb(t *testing.T) {
	t.Setenv("KOSONG_TEST_SEARCH_KEY", "s3cret")
	reqs, bodies := make(chan *http.Request, 1), make(chan searchRequest, 1)
	srv := searchServer(t, reqs, bodies)
	h := newHarness(t, options{client: newClient(5 * time.Second), maxBytes: 1 << 20}, plugintest.Options{
		Configs: map[string]string{"SearchWeb": fmt.Sprintf(`{"endpoint": %q, "api_key_env": "KOSONG_TEST_SEARCH_KEY"}`, srv.URL+"/search")},
	})
	tests := []struct {
		name    string
		args    string
		sent    searchRequest
		kind    pluginsdk.ResultKind
		output  string // prefix
		results int
		message string
	}{
		{"defaults", `{"query": "go generics"}`, searchRequest{Query: "go generics", Limit: 5}, pluginsdk.KindOk,
			"Title: Result 1\nURL: https://example.com/1\nSummary: snippet go generics\n\n---\n\nTitle: Result 2\n", 5, "5 results for \"go generics\"."},
		{"limit and content", `{"query": "q", "limit": 2, "include_content": true}`, searchRequest{Query: "q", Limit: 2, IncludeContent: true},
			pluginsdk.KindOk, "Title: Result 1\nURL: https://example.com/1\nSummary: snippet q\n\ncontent 1\n\n---\n\n", 2, ""},
		{"service error", `{"query": "fail"}`, searchRequest{Query: "fail", Limit: 5}, pluginsdk.KindError, "", 0,
			"The search service answered HTTP 429 Too Many Requests: quota exceeded"},
		{"bad answer", `{"query": "garbage"}`, searchRequest{Query: "garbage", Limit: 5}, pluginsdk.KindError, "", 0, "not the expected JSON"},
		{"no results", `{"query": "nothing"}`, searchRequest{Query: "nothing", Limit: 5}, pluginsdk.KindOk, "", 0, "No results found."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "SearchWeb", tt.args)
			r, body := <-reqs, <-bodies
			if r.Method != http.MethodPost || r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer s3cret" ||
				r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("request %s %s, headers %v", r.Method, r.URL, r.Header)
			}
			if body != tt.sent {
				t.Fatalf("sent %+v, want %+v", body, tt.sent)
			}
			if got.Kind != tt.kind || !strings.HasPrefix(got.Text(), tt.output) || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v", got)
			}
			if n := strings.Count(got.Text(), "Title: "); n != tt.results {
				t.Fatalf("%d results, want %d", n, tt.results)
			}
		})
	}
}
