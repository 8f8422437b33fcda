package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

func TestEventLogReplayAndBound(t *testing.T) {
	l := newEventLog(5, 3)
	for i := range 5 {
		if seq := l.add(map[string]any{"type": "t", "i": i}); seq != int64(5+i) {
			t.Fatalf("seq %d, want %d", seq, 5+i)
		}
	}
	tests := []struct {
		after      int64
		wantFirst  int64
		wantN      int
		wantOldest int64
	}{
		{0, 7, 3, 7},  // older than the log: from the oldest held
		{7, 8, 2, 7},  // a reconnect after 7
		{9, 0, 0, 7},  // up to date
		{8, 9, 1, 7},  // the newest
		{6, 7, 3, 7},  // just before the oldest: nothing lost
		{99, 0, 0, 7}, // ahead of the log
	}
	for _, tt := range tests {
		evs, oldest, _, closed := l.since(tt.after)
		if len(evs) != tt.wantN || oldest != tt.wantOldest || closed {
			t.Fatalf("since(%d) = %d events, oldest %d, closed %v", tt.after, len(evs), oldest, closed)
		}
		if tt.wantN > 0 && evs[0].seq != tt.wantFirst {
			t.Fatalf("since(%d) starts at %d", tt.after, evs[0].seq)
		}
	}
	if l.last() != 9 {
		t.Fatalf("last %d", l.last())
	}
	_, _, changed, _ := l.since(9)
	l.close()
	select {
	case <-changed:
	default:
		t.Fatal("close did not wake the readers")
	}
	if seq := l.add(map[string]any{"type": "late"}); seq != 0 {
		t.Fatalf("an event after close got seq %d", seq)
	}
}

func TestParseAfter(t *testing.T) {
	tests := []struct {
		header, query string
		want          int64
		err           string
	}{
		{"", "", 0, ""},
		{"12", "3", 12, ""},
		{"", "3", 3, ""},
		{"x", "", 0, "invalid Last-Event-ID"},
		{"", "-1", 0, "invalid after"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/v1/sessions/a/events?after="+tt.query, nil)
		if tt.query == "" {
			r = httptest.NewRequest("GET", "/v1/sessions/a/events", nil)
		}
		if tt.header != "" {
			r.Header.Set("Last-Event-ID", tt.header)
		}
		got, err := parseAfter(r)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("parseAfter(%q, %q) = %d, %v", tt.header, tt.query, got, err)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost:7433": true, "127.0.0.1:1": true, "[::1]:80": true, "LOCALHOST": true, "127.1.2.3": true,
		"evil.example:7433": false, "10.0.0.1:7433": false, "": false, "localhost.evil.example": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v", host, got)
		}
	}
}

func TestListenRefusals(t *testing.T) {
	dir := t.TempDir()
	notSock := filepath.Join(dir, "file")
	if err := os.WriteFile(notSock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		opts ListenOptions
		err  string
	}{
		{ListenOptions{Addr: "0.0.0.0:0"}, "not a loopback address"},
		{ListenOptions{Addr: ":0"}, "not a loopback address"},
		{ListenOptions{Addr: "0.0.0.0:0", AllowRemote: true}, "needs TLS"},
		{ListenOptions{Addr: "127.0.0.1:0", TLSKey: "k"}, "go together"},
		{ListenOptions{Addr: "127.0.0.1:0", TLSCert: "/no/c", TLSKey: "/no/k"}, "TLS certificate /no/c"},
		{ListenOptions{Addr: notSock}, "is not a socket"},
		{ListenOptions{Addr: filepath.Join(dir, "s.sock"), TLSCert: "c", TLSKey: "k"}, "do not go with a unix socket"},
		{ListenOptions{Addr: "nohost"}, "invalid --listen"},
	}
	for _, tt := range tests {
		ln, _, err := Listen(tt.opts)
		if err == nil {
			ln.Close()
			t.Errorf("Listen(%+v) listened", tt.opts)
			continue
		}
		if !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Listen(%+v) = %v, want %q", tt.opts, err, tt.err)
		}
	}
	// A socket: mode 0600, and a second server on it is refused.
	sock := filepath.Join(dir, "k.sock")
	ln, loopback, err := Listen(ListenOptions{Addr: sock})
	if err != nil || !loopback {
		t.Fatal(err)
	}
	defer ln.Close()
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", st, err)
	}
	if _, _, err := Listen(ListenOptions{Addr: sock}); err == nil || !strings.Contains(err.Error(), "already listens") {
		t.Fatalf("second listener: %v", err)
	}
}

func TestTokenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "server")
	tok, made, err := Token(dir, "", false, os.Getenv)
	if err != nil || !made || len(tok) < 40 {
		t.Fatalf("first: %q %v %v", tok, made, err)
	}
	st, err := os.Stat(filepath.Join(dir, "token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	again, made, err := Token(dir, "", false, os.Getenv)
	if err != nil || made || again != tok {
		t.Fatalf("second: %v %v", made, err)
	}
	rotated, made, err := Token(dir, "", true, os.Getenv)
	if err != nil || !made || rotated == tok {
		t.Fatalf("rotate: %v %v", made, err)
	}
	if err := os.Chmod(filepath.Join(dir, "token"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Token(dir, "", false, os.Getenv); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a token file readable by others: %v", err)
	}
	env := func(k string) string { return map[string]string{"T": strings.Repeat("a", 20), "S": "short"}[k] }
	if got, _, err := Token(dir, "T", false, env); err != nil || got != strings.Repeat("a", 20) {
		t.Fatalf("--token-env: %q %v", got, err)
	}
	for _, name := range []string{"S", "UNSET"} {
		if _, _, err := Token(dir, name, false, env); err == nil {
			t.Errorf("--token-env %s accepted", name)
		}
	}
}

// TestAuthenticate: the token checks run before any handler, and a
// token in the query string is refused even when right.
func TestAuthenticate(t *testing.T) {
	s, err := New(Config{Token: strings.Repeat("k", 32), StateDir: t.TempDir(), CheckHost: true,
		Open: func(context.Context, OpenRequest) (*Opened, error) { return nil, errors.New("no") }})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	tests := []struct {
		name, target, auth, host string
		status                   int
		code                     string
	}{
		{"healthz", "/healthz", "", "127.0.0.1", 200, ""},
		{"no token", "/v1/sessions", "", "127.0.0.1", 401, serverclient.CodeUnauthorized},
		{"wrong token", "/v1/sessions", "Bearer " + strings.Repeat("j", 32), "127.0.0.1", 401, serverclient.CodeUnauthorized},
		{"basic auth", "/v1/sessions", "Basic a2s6a2s=", "localhost", 401, serverclient.CodeUnauthorized},
		{"right token", "/v1/sessions", "Bearer " + strings.Repeat("k", 32), "localhost:1", 200, ""},
		{"token in query", "/v1/sessions?token=" + strings.Repeat("k", 32), "Bearer " + strings.Repeat("k", 32), "localhost", 400, serverclient.CodeTokenInQuery},
		{"bad host", "/healthz", "", "attacker.example", 403, serverclient.CodeBadHost},
		{"page not served", "/", "", "localhost", 404, serverclient.CodeNotFound},
		{"wrong method", "PUT /v1/sessions", "Bearer " + strings.Repeat("k", 32), "localhost", 405, serverclient.CodeMethod},
		{"wrong method on a session", "PATCH /v1/sessions/abc", "Bearer " + strings.Repeat("k", 32), "localhost", 405, serverclient.CodeMethod},
		{"no such endpoint", "GET /v1/nothing", "Bearer " + strings.Repeat("k", 32), "localhost", 404, serverclient.CodeNotFound},
	}
	for _, tt := range tests {
		method, target, ok := strings.Cut(tt.target, " ")
		if !ok {
			method, target = "GET", tt.target
		}
		r := httptest.NewRequest(method, target, nil)
		r.Host = tt.host
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.status || tt.code != "" && !strings.Contains(w.Body.String(), `"code":"`+tt.code+`"`) {
			t.Errorf("%s: %d %s", tt.name, w.Code, w.Body)
		}
	}
	// A cross-origin POST from a browser is refused.
	r := httptest.NewRequest("POST", "/v1/sessions", strings.NewReader(`{"cwd":"/"}`))
	r.Host = "localhost"
	r.Header.Set("Authorization", "Bearer "+strings.Repeat("k", 32))
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d %s", w.Code, w.Body)
	}
}
