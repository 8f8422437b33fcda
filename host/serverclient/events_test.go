package serverclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestStreamReconnects: a dropped stream is reopened with the id of the
// last event read as Last-Event-ID, and no event is read twice or missed.
func TestStreamReconnects(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"wrong bearer token"}}`)
			return
		}
		mu.Lock()
		asked = append(asked, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		after, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 10\n\n: keep-alive\n\n")
		// Two events a connection, then the connection drops.
		for seq := after + 1; seq <= after+2 && seq <= 5; seq++ {
			fmt.Fprintf(w, "id: %d\ndata: {\"type\":\"t\",\"n\":%d}\n\n", seq, seq)
		}
		if after >= 4 {
			fmt.Fprint(w, "id: 6\ndata: {\"type\":\"session_closed\"}\n\n")
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.Events(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for want := int64(1); want <= 6; want++ {
		ev, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Seq != want {
			t.Fatalf("event %d has seq %d", want, ev.Seq)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(asked) != "[0 2 4]" || st.Reconnects != 2 || st.Retry != 10*time.Millisecond {
		t.Fatalf("Last-Event-IDs sent %v, reconnects %d, retry %v", asked, st.Reconnects, st.Retry)
	}
	// An error answer is an *Error.
	bad, _ := New(srv.URL, "nope", nil)
	if _, err := bad.Events(ctx, "s1", 0); !IsCode(err, CodeUnauthorized) {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:7433", "ftp://x", "http://", "unix://"} {
		if _, err := New(u, "t", nil); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:7433", "https://h:1/", "unix:///tmp/k.sock"} {
		if _, err := New(u, "t", nil); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
}

func TestReadToken(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "TOK": " abc \n"}
	getenv := func(k string) string { return env[k] }
	if tok, err := ReadToken("TOK", getenv); err != nil || tok != "abc" {
		t.Fatalf("from the variable: %q %v", tok, err)
	}
	if _, err := ReadToken("UNSET", getenv); err == nil {
		t.Fatal("an unset variable was accepted")
	}
	if _, err := ReadToken("", getenv); err == nil {
		t.Fatal("no token file, no error")
	}
}

// TestStreamCloseFromAnotherGoroutine: Close, called while Next waits for
// an event (or reconnects) in another goroutine, ends Next with ErrClosed,
// and Next does not reconnect after it.
func TestStreamCloseFromAnotherGoroutine(t *testing.T) {
	var mu sync.Mutex
	connections := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connections++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "retry: 1\n\nid: 1\ndata: {\"type\":\"t\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // no more events until the client goes
	}))
	defer srv.Close()
	c, err := New(srv.URL, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Events(context.Background(), "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Next()
		done <- err
	}()
	st.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v, want ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Next did not return after Close")
	}
	mu.Lock()
	defer mu.Unlock()
	if connections != 1 {
		t.Errorf("%d connections; a closed stream reconnected", connections)
	}
}
