package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchURLAddressesThroughTheHost: through the real host and web
// plugin, FetchURL fetches an address its config allows, and refuses a
// redirect from there to another loopback port and a loopback address the
// config does not name.
func TestFetchURLAddressesThroughTheHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("secret on another port\n"))
	}))
	defer other.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("allowed page\n"))
	}))
	defer allowed.Close()
	allowedAddr, otherAddr := strings.TrimPrefix(allowed.URL, "http://"), strings.TrimPrefix(other.URL, "http://")
	agentYAML := fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - plugin: web
      tools: [FetchURL]
      config: {allowed_addresses: [%q]}
`, allowedAddr)
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi"})
	tests := []struct {
		name, url string
		code      int
		stdout    string
		stderr    string
	}{
		{"allowed address", allowed.URL + "/", 0, "allowed page", ""},
		{"redirect to another port", allowed.URL + "/elsewhere", 1, "",
			"FetchURL refused to connect to " + otherAddr + ", a loopback address, the address of " + other.URL + "/ (redirected from " + allowed.URL + "/elsewhere)"},
		{"address not allowed", other.URL + "/", 1, "", "To allow it, set `allow_private_addresses: true`, or list the address in `allowed_addresses`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, "", "tools", "call", "FetchURL", fmt.Sprintf(`{"url":%q}`, tt.url))
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) || strings.Contains(r.stdout, "secret") {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}
