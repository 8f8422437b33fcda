// Package web is the page `kosong-host serve` serves at /: static files
// (HTML, CSS, JavaScript; no build step, nothing fetched from elsewhere)
// embedded in the binary. The page signs in with the server's token (kept
// in the tab's sessionStorage and sent as the bearer header, never in a
// URL), lists the sessions, and shows one live over its event stream: the
// transcript with Markdown rendered by its own small renderer (model text
// only ever becomes text nodes), tool calls with their output, diffs;
// it sends messages, answers approvals and questions, and cancels turns.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// FS is the page's files.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded folder is part of the binary
	}
	return sub
}

// policy is the page's Content-Security-Policy: its own scripts and
// styles only, no inline script, connections to its own server only.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page: / is index.html, the other files by name; GET
// and HEAD only.
func Handler() http.Handler {
	files := http.FileServerFS(FS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
