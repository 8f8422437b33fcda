// Package streamtest reads a provider's stream to its end, and checks the
// errors a provider ends a request with, for the tests of the providers.
package streamtest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

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
