package timeouts_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers/timeouts"
)

const short = 200 * time.Millisecond

// server answers with handler; it is closed when the test ends.
func server(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

func TestConnectTimeout(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := timeouts.Client(srv.Client(), timeouts.Timeouts{Connect: short})
	start := time.Now()
	_, err := get(t, context.Background(), c, srv.URL)
	var te *timeouts.Error
	if !errors.As(err, &te) || te.Key != timeouts.ConnectKey || te.After != short {
		t.Fatalf("error %v (%T), want a connect timeout", err, err)
	}
	if want := "no response from the server within 200ms (connect_timeout)"; te.Error() != want {
		t.Errorf("text %q, want %q", te.Error(), want)
	}
	if d := time.Since(start); d < short {
		t.Errorf("failed after %s, before the timeout", d)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: a\n\n")
		flush(w)
		<-r.Context().Done()
	})
	c := timeouts.Client(srv.Client(), timeouts.Timeouts{StreamIdle: short})
	resp, err := get(t, context.Background(), c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var te *timeouts.Error
	if !errors.As(err, &te) || te.Key != timeouts.StreamIdleKey {
		t.Fatalf("read %q, error %v, want an idle timeout", b, err)
	}
	if string(b) != "data: a\n\n" {
		t.Errorf("read %q before the stall", b)
	}
	if want := "no data from the stream for 200ms (stream_idle_timeout)"; err.Error() != want {
		t.Errorf("text %q, want %q", err, want)
	}
}

// TestCommentsKeepAlive: a stream that sends only comments, more often than
// the idle timeout, for several timeouts, is not cut.
func TestCommentsKeepAlive(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		tick := time.NewTicker(short / 4)
		defer tick.Stop()
		end := time.After(3 * short)
		for {
			select {
			case <-tick.C:
				_, _ = io.WriteString(w, ": keep-alive\n\n")
				flush(w)
			case <-end:
				_, _ = io.WriteString(w, "data: [DONE]\n\n")
				return
			}
		}
	})
	c := timeouts.Client(srv.Client(), timeouts.Timeouts{StreamIdle: short})
	resp, err := get(t, context.Background(), c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("read %q: %v", b, err)
	}
}

// TestSlowReaderIsNotIdle: the clock runs only while a read waits on the
// server; time the consumer spends elsewhere does not count.
func TestSlowReaderIsNotIdle(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "one\n")
		flush(w)
		_, _ = io.WriteString(w, "two\n")
	})
	c := timeouts.Client(srv.Client(), timeouts.Timeouts{StreamIdle: short})
	resp, err := get(t, context.Background(), c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	// The consumer is busy for longer than the idle timeout; the server
	// has sent everything meanwhile.
	busy := time.NewTimer(2 * short)
	<-busy.C
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "two\n" {
		t.Fatalf("rest %q: %v", rest, err)
	}
}

// TestCancelIsImmediate: cancelling the request's context ends a waiting
// read at once, with the context's error, not a timeout.
func TestCancelIsImmediate(t *testing.T) {
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "a")
		flush(w)
		<-r.Context().Done()
	})
	c := timeouts.Client(srv.Client(), timeouts.Timeouts{StreamIdle: time.Hour, Connect: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := get(t, ctx, c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		done <- err
	}()
	cancel()
	err = <-done
	var te *timeouts.Error
	if err == nil || errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
}

func TestResolvedAndOff(t *testing.T) {
	got := timeouts.Timeouts{}.Resolved()
	if got.Connect != timeouts.DefaultConnect || got.StreamIdle != timeouts.DefaultStreamIdle {
		t.Fatalf("defaults %+v", got)
	}
	// A negative value is off: a slow answer is waited for.
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		wait := time.NewTimer(2 * short)
		<-wait.C
		_, _ = io.WriteString(w, "late")
	})
	c := timeouts.Client(nil, timeouts.Timeouts{Connect: -1, StreamIdle: -1})
	resp, err := get(t, context.Background(), c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "late" {
		t.Fatalf("read %q: %v", b, err)
	}
}
