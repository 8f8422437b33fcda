package anthropic

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/kosong-host/kosong-host/providers"
)

// block is a content block being streamed.
type block struct {
	index      int64
	typ        string
	id, name   string
	startInput string // a tool_use input given whole in content_block_start
	input      strings.Builder
	thinking   strings.Builder
	signature  strings.Builder
	data       string
	// announced: the tool call was announced in a part; sent is how much
	// of its arguments the parts carried.
	announced  bool
	sent       int
	stopped    bool
	unfinished bool // never stopped: the stream ended inside it
}

type stream struct {
	providers.EventQueue

	ctx    context.Context
	cancel context.CancelFunc
	p      *Provider
	raw    *ssestream.Stream[anthropic.MessageStreamEventUnion]

	blocks    map[int64]*block
	thoughts  []storedBlock // thinking and redacted_thinking blocks, in order
	reasoning strings.Builder
	sawText   bool
	calls     int
	held      []*providers.ToolCall // calls whose input did not parse, until the stop reason says why
	reason    anthropic.StopReason  // message_delta's stop_reason
	stopped   bool                  // message_stop seen
	usage     providers.Usage
	sawUsage  bool
	signature string
	closeOnce sync.Once
}

var _ providers.Stream = (*stream)(nil)

// Next implements providers.Stream.
func (s *stream) Next() (providers.Event, error) { return s.Pop(s.step) }

// Close implements providers.Stream. It may be called while Next waits:
// the request is cancelled.
func (s *stream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancel()
		err = s.raw.Close()
	})
	return err
}

// ReasoningSignature is the signature of the response's thinking, to keep
// as providers.Message.ReasoningSignature on the assistant message (empty
// when the response had no thinking block). It is set once Next returned
// io.EOF.
func (s *stream) ReasoningSignature() string { return s.signature }

func (s *stream) fail(err error) {
	s.Err = err
	_ = s.Close()
}

func (s *stream) emit(ev providers.Event) { s.Events = append(s.Events, ev) }

// step reads one event and queues what it yields.
func (s *stream) step() {
	if !s.raw.Next() {
		if err := s.raw.Err(); err != nil {
			s.fail(s.p.classify(s.ctx, err))
			return
		}
		if err := s.p.ctxError(s.ctx); err != nil {
			s.fail(err)
			return
		}
		s.end()
		return
	}
	ev := s.raw.Current()
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.setUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
	case "content_block_start":
		s.release(false) // the response went on: the held calls were not cut off
		cb := ev.ContentBlock
		b := &block{index: ev.Index, typ: cb.Type, id: cb.ID, name: cb.Name, data: cb.Data}
		b.signature.WriteString(cb.Signature)
		if cb.Type == "tool_use" && cb.Input != nil {
			if in, err := json.Marshal(cb.Input); err == nil && string(in) != "{}" && string(in) != "null" {
				b.startInput = string(in)
			}
		}
		s.blocks[ev.Index] = b
		if b.typ == "tool_use" && strings.TrimSpace(b.name) != "" {
			if b.id == "" {
				b.id = newCallID()
			}
			s.part(b, "")
		}
		if cb.Text != "" {
			s.text(cb.Text)
		}
		if cb.Thinking != "" {
			s.think(b, cb.Thinking)
		}
	case "content_block_delta":
		b := s.blocks[ev.Index]
		if b == nil || b.stopped {
			s.fail(s.p.newError(providers.ErrServer, 0, fmt.Errorf("protocol error: delta for content block %d, which is not open", ev.Index)))
			return
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			s.text(d.Text)
		case "thinking_delta":
			s.think(b, d.Thinking)
		case "signature_delta":
			b.signature.WriteString(d.Signature)
		case "input_json_delta":
			b.input.WriteString(d.PartialJSON)
			if b.announced && d.PartialJSON != "" {
				s.part(b, d.PartialJSON)
			}
		}
	case "content_block_stop":
		b := s.blocks[ev.Index]
		if b == nil || b.stopped {
			s.fail(s.p.newError(providers.ErrServer, 0, fmt.Errorf("protocol error: content_block_stop for content block %d, which is not open", ev.Index)))
			return
		}
		s.stop(b)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.reason = ev.Delta.StopReason
		}
		u := ev.Usage
		s.setUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
	case "message_stop":
		s.stopped = true
	}
}

func (s *stream) text(t string) {
	if t == "" {
		return
	}
	s.sawText = true
	s.emit(providers.Event{Kind: providers.EventText, Text: t})
}

func (s *stream) think(b *block, t string) {
	if t == "" {
		return
	}
	b.thinking.WriteString(t)
	s.reasoning.WriteString(t)
	s.emit(providers.Event{Kind: providers.EventReasoning, Text: t})
}

// part emits the next part of tool_use block b's arguments.
func (s *stream) part(b *block, args string) {
	b.announced = true
	b.sent += len(args)
	s.emit(providers.Event{Kind: providers.EventToolCallPart, Part: &providers.ToolCallPart{ID: b.id, Name: b.name, Arguments: args}})
}

// stop completes a block: a tool call is emitted at once.
func (s *stream) stop(b *block) {
	b.stopped = true
	switch b.typ {
	case "tool_use":
		if strings.TrimSpace(b.name) == "" {
			s.fail(s.p.newError(providers.ErrServer, 0, fmt.Errorf("protocol error: tool_use content block %d has no name", b.index)))
			return
		}
		args := b.input.String()
		if strings.TrimSpace(args) == "" {
			args = b.startInput
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		id := b.id
		if id == "" {
			id = newCallID()
		}
		if b.announced && b.sent < len(args) && strings.HasPrefix(args, b.input.String()) {
			// The arguments came whole in content_block_start, or not at all.
			s.part(b, args[b.sent:])
		}
		s.calls++
		call := &providers.ToolCall{ID: id, Name: b.name, Arguments: args}
		if len(s.held) > 0 || b.unfinished || !json.Valid([]byte(args)) {
			// Input that does not parse may have been cut off by the
			// output limit: the stop reason, which comes next, says.
			s.held = append(s.held, call)
			return
		}
		s.emit(providers.Event{Kind: providers.EventToolCall, ToolCall: call})
	case "thinking":
		s.thoughts = append(s.thoughts, storedBlock{Type: "thinking", Thinking: b.thinking.String(), Signature: b.signature.String()})
	case "redacted_thinking":
		s.thoughts = append(s.thoughts, storedBlock{Type: "redacted_thinking", Data: b.data})
	}
}

// release emits the held calls, as truncated ones when the output limit
// ended the response.
func (s *stream) release(truncated bool) {
	for _, call := range s.held {
		call.Truncated = truncated
		s.emit(providers.Event{Kind: providers.EventToolCall, ToolCall: call})
	}
	s.held = nil
}

// stopReason maps the API's stop_reason ("" when none came).
func stopReason(r anthropic.StopReason) providers.StopReason {
	switch r {
	case "":
		return ""
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return providers.StopEnd
	case anthropic.StopReasonToolUse:
		return providers.StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return providers.StopMaxTokens
	case anthropic.StopReasonRefusal:
		return providers.StopContentFilter
	}
	return providers.StopOther
}

// setUsage records usage; message_delta's counts are cumulative, and zero
// means not reported.
func (s *stream) setUsage(input, cacheRead, cacheCreation, output int64) {
	if input != 0 || cacheRead != 0 || cacheCreation != 0 {
		s.usage.InputTokens = input + cacheRead + cacheCreation
		s.usage.CacheReadTokens = cacheRead
		s.usage.CacheCreationTokens = cacheCreation
		s.sawUsage = true
	}
	if output != 0 {
		s.usage.OutputTokens = output
		s.sawUsage = true
	}
}

// end finishes the response once the stream is over.
func (s *stream) end() {
	defer s.Close()
	if !s.stopped {
		s.Err = s.p.newError(providers.ErrConnection, 0, errTruncated)
		return
	}
	// Blocks left open by a sloppy server: complete them in order.
	var open []*block
	for _, b := range s.blocks {
		if !b.stopped {
			open = append(open, b)
		}
	}
	slices.SortFunc(open, func(a, b *block) int { return int(a.index - b.index) })
	for _, b := range open {
		b.unfinished = true
		s.stop(b)
	}
	stop := stopReason(s.reason)
	s.release(stop == providers.StopMaxTokens)
	if s.Err != nil {
		return
	}
	if !s.sawText && s.calls == 0 {
		msg := "the model returned no text and no tool call"
		if stop == providers.StopMaxTokens {
			msg += " before the output limit cut it off (stop_reason " + string(s.reason) + ")"
		}
		s.Err = s.p.newError(providers.ErrEmptyResponse, 0, errors.New(msg))
		return
	}
	s.signature = encodeSignature(s.thoughts, s.reasoning.String())
	if s.sawUsage {
		u := s.usage
		s.emit(providers.Event{Kind: providers.EventUsage, Usage: &u})
	}
	if stop != "" {
		s.emit(providers.Event{Kind: providers.EventStop, Stop: stop})
	}
	s.Finished = true
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "toolu_" + hex.EncodeToString(b[:])
}
