// Package scripted is a ChatProvider that replays scripted model turns, for
// tests and demos without a model. Each Stream call plays the next turn
// through the same events a real provider emits; it never pretends to be a
// model: its Model is "script:" + the script's file name.
//
// A script file is YAML:
//
//	# comment
//	delay: 20ms                 # optional default pause between chunks
//	turns:
//	  - reasoning: "The user wants a listing."   # optional
//	    text: "Let me look."                     # optional, streamed word by word
//	    tool_calls:                              # optional
//	      - {id: call_1, name: Shell, arguments: {command: "ls"}}
//	      - name: ReadFile                       # id optional: call_<turn>_<n>
//	        arguments: '{"path": "README.md"}'   # a mapping, or JSON text kept verbatim
//	    delay: 50ms                              # optional, overrides the default
//	    usage: {input_tokens: 10, output_tokens: 5}  # optional
//	  - error: rate_limit                        # optional: fail this call instead
//	  - text: "I will write the file."
//	    tool_calls:
//	      - name: WriteFile                      # a call cut off by the output limit:
//	        arguments: '{"path": "a.txt", "cont' #   emitted with Truncated set, as received
//	        truncated: true
//	    stop: max_tokens                         # optional; implied by a truncated call
//	  - text: "Done."
//
// stop is the turn's stop reason, emitted last (providers.EventStop): one of
// end_turn, tool_use, max_tokens, content_filter, other. Without it a turn
// stops with max_tokens when a call is truncated, else tool_use when it
// calls tools, else end_turn, as a real provider reports.
//
// error is one of auth, rate_limit, server, connection, empty_response,
// bad_request: Stream fails with that *providers.Error, and the loop's retry
// plays the next turn. A turn with neither text nor tool calls ends with
// ErrEmptyResponse, as a real provider's would. When the turns run out,
// Stream fails with ErrScriptExhausted.
package scripted

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// Turn is one scripted model response.
type Turn struct {
	Text      string
	Reasoning string
	// ToolCalls are emitted after the text; an empty ID is replaced by
	// call_<turn>_<n> (both 1-based).
	ToolCalls []providers.ToolCall
	// Delay is the pause before each chunk but the first.
	Delay time.Duration
	Usage *providers.Usage
	// Error, when not zero, makes Stream fail with a *providers.Error of
	// this kind instead of playing the turn.
	Error providers.ErrorKind
	// Stop is the stop reason emitted last; empty means the default (see
	// the package documentation).
	Stop providers.StopReason
}

// stopOf is the stop reason a turn ends with.
func stopOf(t Turn) providers.StopReason {
	if t.Stop != "" {
		return t.Stop
	}
	for _, tc := range t.ToolCalls {
		if tc.Truncated {
			return providers.StopMaxTokens
		}
	}
	if len(t.ToolCalls) > 0 {
		return providers.StopToolUse
	}
	return providers.StopEnd
}

// Provider replays turns; it is safe for concurrent use.
type Provider struct {
	source string // the script's path, or "(inline)"
	model  string

	mu     sync.Mutex
	turns  []Turn
	played int
}

var _ providers.ChatProvider = (*Provider)(nil)

// New returns a provider replaying turns (Model "script:inline").
func New(turns []Turn) *Provider {
	return newProvider("(inline)", "script:inline", turns)
}

func newProvider(source, model string, turns []Turn) *Provider {
	turns = append([]Turn(nil), turns...)
	for i := range turns {
		calls := append([]providers.ToolCall(nil), turns[i].ToolCalls...)
		for j := range calls {
			if calls[j].ID == "" {
				calls[j].ID = fmt.Sprintf("call_%d_%d", i+1, j+1)
			}
		}
		turns[i].ToolCalls = calls
	}
	return &Provider{source: source, model: model, turns: turns}
}

// Name implements providers.ChatProvider: "scripted".
func (p *Provider) Name() string { return "scripted" }

// Model implements providers.ChatProvider: "script:" + the script's base
// file name.
func (p *Provider) Model() string { return p.model }

// Source is the script's path as given, or "(inline)".
func (p *Provider) Source() string { return p.source }

// Played is the number of turns played so far.
func (p *Provider) Played() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.played
}

// Remaining is the number of turns left.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.turns) - p.played
}

// Stream implements providers.ChatProvider: it plays the next turn. The
// request is not looked at.
func (p *Provider) Stream(ctx context.Context, _ providers.Request) (providers.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.played >= len(p.turns) {
		played := p.played
		p.mu.Unlock()
		return nil, &providers.Error{
			Provider: "scripted",
			Kind:     providers.ErrScriptExhausted,
			Err:      fmt.Errorf("scripted provider: the script %s has no more turns (%d played)", p.source, played),
		}
	}
	turn := p.turns[p.played]
	p.played++
	n := p.played
	p.mu.Unlock()

	if turn.Error != 0 {
		return nil, &providers.Error{
			Provider: "scripted",
			Kind:     turn.Error,
			Err:      fmt.Errorf("scripted failure (turn %d of %s)", n, p.source),
		}
	}
	var events []providers.Event
	for _, w := range splitWords(turn.Reasoning) {
		events = append(events, providers.Event{Kind: providers.EventReasoning, Text: w})
	}
	for _, w := range splitWords(turn.Text) {
		events = append(events, providers.Event{Kind: providers.EventText, Text: w})
	}
	for _, tc := range turn.ToolCalls {
		events = append(events, providers.Event{Kind: providers.EventToolCall, ToolCall: &tc})
	}
	s := &stream{ctx: ctx, events: events, delay: turn.Delay}
	if turn.Text == "" && len(turn.ToolCalls) == 0 {
		s.end = &providers.Error{
			Provider: "scripted",
			Kind:     providers.ErrEmptyResponse,
			Err:      fmt.Errorf("turn %d of %s has no text and no tool call", n, p.source),
		}
	} else {
		if turn.Usage != nil {
			u := *turn.Usage
			s.events = append(s.events, providers.Event{Kind: providers.EventUsage, Usage: &u})
		}
		s.events = append(s.events, providers.Event{Kind: providers.EventStop, Stop: stopOf(turn)})
	}
	return s, nil
}

var wordRE = regexp.MustCompile(`\s*\S+\s*`)

// splitWords cuts s into chunks of one word with the spaces around it;
// the chunks join back into s.
func splitWords(s string) []string {
	if s == "" {
		return nil
	}
	words := wordRE.FindAllString(s, -1)
	if len(words) == 0 {
		return []string{s}
	}
	return words
}

type stream struct {
	ctx    context.Context
	events []providers.Event
	delay  time.Duration
	sent   int
	end    error // returned after the events instead of io.EOF

	mu     sync.Mutex
	closed bool
}

func (s *stream) Next() (providers.Event, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return providers.Event{}, io.EOF
	}
	if err := s.ctx.Err(); err != nil {
		return providers.Event{}, err
	}
	if s.sent >= len(s.events) {
		if s.end != nil {
			return providers.Event{}, s.end
		}
		return providers.Event{}, io.EOF
	}
	ev := s.events[s.sent]
	// The pause is between chunks; usage and the stop reason close the
	// last one.
	if s.sent > 0 && s.delay > 0 && ev.Kind != providers.EventUsage && ev.Kind != providers.EventStop {
		t := time.NewTimer(s.delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return providers.Event{}, s.ctx.Err()
		case <-t.C:
		}
	}
	s.sent++
	return ev, nil
}

func (s *stream) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// Load reads a script file.
func Load(path string) (*Provider, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses a script; path names it in errors and, by its base name, in
// Model.
func Parse(path string, data []byte) (*Provider, error) {
	turns, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	return newProvider(path, "script:"+filepath.Base(path), turns), nil
}
