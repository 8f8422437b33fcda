package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/openaitest"
	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// The stalls every provider must turn into a timeout.
const (
	stallHeaders   = "never sends headers"
	stallChunk     = "one chunk, then silence"
	stallFragments = "silence between two tool-call fragments"
)

const stallWait = 300 * time.Millisecond

// stallProviders build each provider against a fake server scripted to
// stall one way.
var stallProviders = []struct {
	name  string
	start func(t *testing.T, stall string, to timeouts.Timeouts) providers.ChatProvider
}{
	{"openai", func(t *testing.T, stall string, to timeouts.Timeouts) providers.ChatProvider {
		var resp openaitest.Response
		switch stall {
		case stallHeaders:
			resp = openaitest.Response{StallHeaders: true}
		case stallChunk:
			// Chunks: the role, "a", "b": silence after "a".
			resp = openaitest.Response{Text: []string{"a", "b"}, StallAfter: 2}
		case stallFragments:
			// Chunks: the role, the call's name, then its arguments in
			// pieces of 4 bytes: silence after the first piece.
			resp = openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "Shell", Arguments: `{"command":"ls"}`}},
				Quirks: openaitest.Quirks{SplitArguments: 4}, StallAfter: 3}
		}
		srv := openaitest.NewServer(t, resp)
		p, err := openaicompat.New(openaicompat.Config{Name: "openai", BaseURL: srv.BaseURL(), APIKey: "k", Model: "m",
			HTTPClient: srv.Client(), Timeouts: to})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"anthropic", func(t *testing.T, stall string, to timeouts.Timeouts) providers.ChatProvider {
		var resp anthropictest.Response
		switch stall {
		case stallHeaders:
			resp = anthropictest.Response{StallHeaders: true}
		case stallChunk:
			// Events: message_start, content_block_start, "a", "b"...
			resp = anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a", "b")}, StallAfter: 3, Pings: true}
		case stallFragments:
			// Events: message_start, content_block_start, the first
			// input_json_delta: silence.
			resp = anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.ToolUse("toolu_1", "Shell", `{"command":"ls"}`, 4)},
				StallAfter: 3}
		}
		srv := anthropictest.NewServer(t, resp)
		p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "k", HTTPClient: srv.Client(), Timeouts: to})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"google", func(t *testing.T, stall string, to timeouts.Timeouts) providers.ChatProvider {
		var resp googletest.Response
		switch stall {
		case stallHeaders:
			resp = googletest.Response{StallHeaders: true}
		case stallChunk:
			resp = googletest.Response{Text: []string{"a", "b"}, StallAfter: 1}
		case stallFragments:
			// Gemini sends each call whole: silence between two calls.
			resp = googletest.Response{Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"ls"}`}, {Name: "Glob", Args: `{"pattern":"*"}`}},
				StallAfter: 1}
		}
		srv := googletest.NewServer(t, resp)
		p, err := google.New(google.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-2.5-flash", HTTPClient: srv.Client(), Timeouts: to})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
}

// TestStalledServersTimeOut: every provider turns a stalled server into a
// retryable ErrTimeout whose text says what stalled and for how long, after
// the configured wait and not before.
func TestStalledServersTimeOut(t *testing.T) {
	to := timeouts.Timeouts{Connect: stallWait, StreamIdle: stallWait}
	for _, prov := range stallProviders {
		for _, stall := range []string{stallHeaders, stallChunk, stallFragments} {
			t.Run(prov.name+"/"+stall, func(t *testing.T) {
				t.Parallel()
				p := prov.start(t, stall, to)
				req := providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}}
				start := time.Now()
				s, err := p.Stream(context.Background(), req)
				var res streamtest.Result
				if err == nil {
					res = streamtest.Drain(s, nil)
					err = res.Err
				}
				elapsed := time.Since(start)
				var pe *providers.Error
				if !errors.As(err, &pe) || pe.Kind != providers.ErrTimeout || !pe.Retryable() || pe.Provider != p.Name() {
					t.Fatalf("error %v (%T), want a retryable %s ErrTimeout", err, err, p.Name())
				}
				want := p.Name() + ": timed out: no data from the stream for 300ms (stream_idle_timeout)"
				if stall == stallHeaders {
					want = p.Name() + ": timed out: no response from the server within 300ms (connect_timeout)"
				}
				if err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v reads as a cancellation", err)
				}
				if elapsed < stallWait {
					t.Errorf("failed after %s, before the timeout", elapsed)
				}
				switch stall {
				case stallChunk:
					if res.Text != "a" {
						t.Errorf("text before the stall %q, want %q", res.Text, "a")
					}
				case stallFragments:
					// A call cut by the stall is never emitted.
					for _, c := range res.Calls {
						if c.Name == "Shell" && p.Name() != "google" {
							t.Errorf("the incomplete call was emitted: %+v", c)
						}
					}
				}
			})
		}
	}
}

// TestCancelDuringStall: cancelling the request ends a stalled stream at
// once with the context's error, however long the timeouts are.
func TestCancelDuringStall(t *testing.T) {
	to := timeouts.Timeouts{Connect: time.Hour, StreamIdle: time.Hour}
	for _, prov := range stallProviders {
		t.Run(prov.name, func(t *testing.T) {
			t.Parallel()
			p := prov.start(t, stallChunk, to)
			ctx, cancel := context.WithCancel(context.Background())
			s, err := p.Stream(ctx, providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if ev, err := s.Next(); err != nil || ev.Text != "a" {
				t.Fatalf("first event %+v %v", ev, err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Next()
				done <- err
			}()
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Next still waits 30s after the cancel")
			}
			if !errors.Is(err, context.Canceled) || providers.IsRetryable(err) || strings.Contains(err.Error(), "timed out") {
				t.Fatalf("error %v, want the context's", err)
			}
		})
	}
}
