// Package timeouts bounds how long a provider waits on its API: for the
// response headers of a request (Connect) and, once a response streams, for
// the next byte of its body (StreamIdle). Every provider wraps its HTTP
// client with Client, so the three speak one rule and one error.
//
// Any byte resets the idle clock, SSE comments and keep-alive lines
// included: a server that says it is alive is alive. The clock runs only
// while a read waits on the server, so a slow consumer never trips it.
//
// Expiry cancels the request and makes the pending call (RoundTrip, or the
// body's Read) fail with *Error, which providers report as a retryable
// providers.ErrTimeout. Cancelling the request's own context still ends it
// at once, with the context's error, as before.
package timeouts

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The defaults: generous enough for reasoning models that think for minutes
// before their first token (Codex waits 300 s on a silent stream too).
const (
	DefaultConnect    = 120 * time.Second
	DefaultStreamIdle = 300 * time.Second
)

// The configuration keys (and the flag's name), named in errors.
const (
	ConnectKey    = "connect_timeout"
	StreamIdleKey = "stream_idle_timeout"
)

// Timeouts are a provider's waits. Zero takes the default; a negative value
// turns that wait off.
type Timeouts struct {
	// Connect bounds the time from sending a request to its response
	// headers: connecting, TLS, sending the body and the server's answer.
	Connect time.Duration
	// StreamIdle bounds the silence of a response body: no byte for that
	// long fails the read.
	StreamIdle time.Duration
}

// Resolved fills the defaults in.
func (t Timeouts) Resolved() Timeouts {
	if t.Connect == 0 {
		t.Connect = DefaultConnect
	}
	if t.StreamIdle == 0 {
		t.StreamIdle = DefaultStreamIdle
	}
	return t
}

// Error is a wait that expired. Its text says what stalled and for how
// long, and names the setting: "no data from the stream for 2s
// (stream_idle_timeout)".
type Error struct {
	// Key is ConnectKey or StreamIdleKey.
	Key   string
	After time.Duration
}

func (e *Error) Error() string {
	if e.Key == ConnectKey {
		return fmt.Sprintf("no response from the server within %s (%s)", e.After, e.Key)
	}
	return fmt.Sprintf("no data from the stream for %s (%s)", e.After, e.Key)
}

// Timeout reports true, as net.Error does for timeouts.
func (e *Error) Timeout() bool { return true }

// Client returns a client that behaves as c (a plain client when nil) and
// enforces t (defaults filled in). c itself is not changed.
func Client(c *http.Client, t Timeouts) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = &transport{base: base, t: t.Resolved()}
	return out
}

type transport struct {
	base http.RoundTripper
	t    Timeouts
}

// RoundTrip sends req under the connect timeout and wraps the response
// body with the idle timeout.
func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	w := &watch{cancel: cancel}
	if tr.t.Connect > 0 {
		w.arm(&Error{Key: ConnectKey, After: tr.t.Connect}, tr.t.Connect)
	}
	resp, err := tr.base.RoundTrip(req.WithContext(ctx))
	stalled := w.disarm()
	if stalled != nil {
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		return nil, stalled
	}
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &body{rc: resp.Body, w: w, idle: tr.t.StreamIdle}
	return resp, nil
}

// watch cancels a request when its timer fires and remembers why.
type watch struct {
	cancel context.CancelFunc

	mu      sync.Mutex
	timer   *time.Timer
	stalled *Error
}

// arm starts the clock: after d, the request is cancelled for e.
func (w *watch) arm(e *Error, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(d, func() {
		w.mu.Lock()
		if w.stalled == nil {
			w.stalled = e
		}
		w.mu.Unlock()
		w.cancel()
	})
}

// disarm stops the clock and returns the expiry, if it came first.
func (w *watch) disarm() *Error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	return w.stalled
}

// body is a response body whose reads fail with *Error after idle without
// a byte.
type body struct {
	rc   io.ReadCloser
	w    *watch
	idle time.Duration
	once sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	if stalled := b.w.disarm(); stalled != nil {
		return 0, stalled
	}
	if b.idle > 0 && len(p) > 0 {
		b.w.arm(&Error{Key: StreamIdleKey, After: b.idle}, b.idle)
	}
	n, err := b.rc.Read(p)
	if stalled := b.w.disarm(); stalled != nil {
		// The read was cut by the expiry: whatever it says, the stream
		// stalled.
		return n, stalled
	}
	return n, err
}

func (b *body) Close() error {
	var err error
	b.once.Do(func() {
		b.w.disarm()
		err = b.rc.Close()
		b.w.cancel()
	})
	return err
}
