// Package streamtest reads a provider's stream to its end, and checks the
// errors a provider ends a request with, for the tests of the providers.
package streamtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// Result is everything a stream produced.
type Result struct {
	Events     []providers.Event
	Text       string
	TextChunks int
	Reasoning  string
	Calls      []providers.ToolCall
	Usage      *providers.Usage
	// Stop is the stop reason; Stops counts the EventStop events, and
	// StopLast says the (last) one was the last event.
	Stop     providers.StopReason
	Stops    int
	StopLast bool
	// Signature is the stream's reasoning signature, if it has one.
	Signature string
	// Err is the error that ended the stream early, if any.
	Err error
	// Parts are the tool call parts, in order (they are not in Events);
	// PartsAfter lists the parts that came after their call.
	Parts      []providers.ToolCallPart
	PartsAfter []providers.ToolCallPart
}

// CheckParts checks that every call of r was streamed in parts before it:
// the first names it, and their arguments concatenate to its arguments.
func CheckParts(t *testing.T, r Result) {
	t.Helper()
	if len(r.PartsAfter) > 0 {
		t.Errorf("parts after their call: %+v", r.PartsAfter)
	}
	for _, c := range r.Calls {
		var args strings.Builder
		n := 0
		for _, p := range r.Parts {
			if p.ID != c.ID {
				continue
			}
			if p.Name != c.Name {
				t.Errorf("call %s: part names %q, want %q", c.ID, p.Name, c.Name)
			}
			args.WriteString(p.Arguments)
			n++
		}
		if n == 0 {
			t.Errorf("call %s (%s): no part before it", c.ID, c.Name)
		} else if args.String() != c.Arguments {
			t.Errorf("call %s: parts concatenate to %q, want %q", c.ID, args.String(), c.Arguments)
		}
	}
	for _, p := range r.Parts {
		if !slices.ContainsFunc(r.Calls, func(c providers.ToolCall) bool { return c.ID == p.ID }) && r.Err == nil {
			t.Errorf("part %+v of no call", p)
		}
	}
}

// Drain reads s to its end and closes it. onCall, if not nil, is called with
// each tool call as it is received.
func Drain(s providers.Stream, onCall func(providers.ToolCall)) Result {
	defer s.Close()
	var r Result
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.Err = err
			return r
		}
		if ev.Kind == providers.EventToolCallPart {
			p := *ev.Part
			r.Parts = append(r.Parts, p)
			if slices.ContainsFunc(r.Calls, func(c providers.ToolCall) bool { return c.ID == p.ID }) {
				r.PartsAfter = append(r.PartsAfter, p)
			}
			continue
		}
		r.Events = append(r.Events, ev)
		switch ev.Kind {
		case providers.EventText:
			r.Text += ev.Text
			r.TextChunks++
		case providers.EventReasoning:
			r.Reasoning += ev.Text
		case providers.EventToolCall:
			r.Calls = append(r.Calls, *ev.ToolCall)
			if onCall != nil {
				onCall(*ev.ToolCall)
			}
		case providers.EventUsage:
			r.Usage = ev.Usage
		case providers.EventStop:
			r.Stop = ev.Stop
			r.Stops++
		}
		r.StopLast = ev.Kind == providers.EventStop
	}
	if ss, ok := s.(providers.SignedStream); ok {
		r.Signature = ss.ReasoningSignature()
	}
	return r
}

// WantError is the error a request to a provider should end with.
type WantError struct {
	Provider  string
	Kind      providers.ErrorKind
	Status    int
	Retryable bool
	// OnNext says the error ends the stream rather than Stream.
	OnNext bool
	// Contains is a part of the error's text.
	Contains string
}

// CheckError sends req to p and checks the error it ends with.
func CheckError(t *testing.T, p providers.ChatProvider, req providers.Request, want WantError) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if want.OnNext {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		err = Drain(s, nil).Err
	} else if err == nil {
		s.Close()
		t.Fatal("Stream succeeded")
	}
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *providers.Error", err, err)
	}
	if pe.Kind != want.Kind || pe.StatusCode != want.Status || pe.Retryable() != want.Retryable || pe.Provider != want.Provider {
		t.Errorf("error %v: kind %v status %d retryable %v", err, pe.Kind, pe.StatusCode, pe.Retryable())
	}
	if !strings.Contains(err.Error(), want.Contains) {
		t.Errorf("error %q does not contain %q", err, want.Contains)
	}
}

// CheckCloseWhileWaiting checks that Close ends a Next waiting for the
// server: s must have a first event with text "a", then keep the server
// waiting.
func CheckCloseWhileWaiting(t *testing.T, s providers.Stream) {
	t.Helper()
	if ev, err := s.Next(); err != nil || ev.Text != "a" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	s.Close()
	if err := <-done; err == nil {
		t.Error("Next succeeded after Close")
	}
	s.Close()
}

// BodyServer serves whatever body was last set as an event stream: the
// server of a provider's stream fuzz target.
type BodyServer struct {
	*httptest.Server
	mu   sync.Mutex
	body string
}

// NewBodyServer starts a BodyServer, closed when tb ends.
func NewBodyServer(tb testing.TB) *BodyServer {
	s := &BodyServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		b := s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(b))
	}))
	tb.Cleanup(s.Close)
	return s
}

// Set makes body the server's next answer.
func (s *BodyServer) Set(body string) {
	s.mu.Lock()
	s.body = body
	s.mu.Unlock()
}

// CheckAnyStream streams one response of p, which its server answers
// with data, and checks what fuzzing asks of any stream: no panic and no
// hang; an end in a *providers.Error of one line, or with text or tool
// calls that each have an id and a name.
func CheckAnyStream(t *testing.T, p providers.ChatProvider, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r Result
	s, err := p.Stream(ctx, providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
	if err != nil {
		r.Err = err
	} else {
		r = Drain(s, nil)
	}
	if ctx.Err() != nil {
		t.Fatalf("no end within 10s for %q", data)
	}
	if r.Err != nil {
		var pe *providers.Error
		if !errors.As(r.Err, &pe) {
			t.Fatalf("error %T is not a *providers.Error: %v", r.Err, r.Err)
		}
		if strings.ContainsAny(r.Err.Error(), "\n\r") {
			t.Fatalf("error is not one line: %q", r.Err)
		}
		return
	}
	if r.Text == "" && len(r.Calls) == 0 {
		t.Fatalf("a response with no text and no tool call, without an error: %+v", r)
	}
	for _, c := range r.Calls {
		if c.ID == "" || c.Name == "" {
			t.Fatalf("tool call without an id or a name: %+v", c)
		}
	}
}
