package web

import (
	"io/fs"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHandler: / is the page, files are served by name with the page's
// security headers, anything but GET and HEAD is refused, an unknown file
// is 404.
func TestHandler(t *testing.T) {
	h := Handler()
	tests := []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/", 200, `<script src="app.js"`},
		{"GET", "/app.js", 200, "sessionStorage"},
		{"GET", "/md.js", 200, "const Markdown"},
		{"GET", "/style.css", 200, "--accent"},
		{"HEAD", "/", 200, ""},
		{"POST", "/", 405, ""},
		{"GET", "/nothing.js", 404, ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, rec.Code, tt.status)
		}
		if !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s %s: body has no %q", tt.method, tt.path, tt.body)
		}
		if tt.status == 200 {
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Errorf("%s %s: Content-Security-Policy %q", tt.method, tt.path, csp)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("%s %s: headers %v", tt.method, tt.path, rec.Header())
			}
		}
	}
}

// TestNoHTMLSinks: the page's scripts never parse strings as HTML, so no
// model or tool text can become markup; they load nothing from elsewhere
// and never put the token in a URL.
func TestNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|setTimeout\(["']`)
	remote := regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`)
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), path)
		if err != nil {
			return err
		}
		if m := sinks.Find(b); m != nil {
			t.Errorf("%s uses %s", path, m)
		}
		if m := remote.Find(b); m != nil {
			t.Errorf("%s loads from elsewhere: %s", path, m)
		}
		if strings.Contains(string(b), "?token=") || strings.Contains(string(b), "&token=") {
			t.Errorf("%s puts the token in a URL", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
