// Package streamtest reads a provider's stream to its end for the tests of
// the providers.
package streamtest

import (
	"errors"
	"io"

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
		}
	}
	if ss, ok := s.(providers.SignedStream); ok {
		r.Signature = ss.ReasoningSignature()
	}
	return r
}
