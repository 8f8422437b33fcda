package openaicompat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kosong-host/kosong-host/providers"
)

// chunk is one streamed chat.completion.chunk. It is decoded here rather
// than by go-openai to read what go-openai drops: usage inside choices[0],
// Kimi's usage.cached_tokens, a `reasoning` delta, an error object, and
// arguments sent as a JSON object.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content          *string         `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			Refusal          *string         `json:"refusal"`
			ToolCalls        []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string    `json:"finish_reason"`
		Usage        *wireUsage `json:"usage"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// arguments is the delta's arguments text: a JSON string's value, or the
// raw JSON of anything else (some servers send an object).
func (d toolCallDelta) arguments() string {
	raw := d.Function.Arguments
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	CachedTokens        int64 `json:"cached_tokens"` // Kimi
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (u *wireUsage) usage() *providers.Usage {
	out := &providers.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: u.CachedTokens}
	if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > out.CacheReadTokens {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

type stream struct {
	providers.EventQueue

	ctx context.Context
	p   *Provider
	raw *openai.ChatCompletionStream
	w   *watch

	calls     accumulator
	sawText   bool
	sawFinish bool
	finish    string // the last finish_reason
	usage     *providers.Usage
	closeOnce sync.Once
}

func newStream(ctx context.Context, p *Provider, raw *openai.ChatCompletionStream, w *watch) *stream {
	return &stream{ctx: ctx, p: p, raw: raw, w: w, calls: accumulator{byIndex: map[int]*pendingCall{}}}
}

// Next implements providers.Stream.
func (s *stream) Next() (providers.Event, error) { return s.Pop(s.step) }

// Close implements providers.Stream.
func (s *stream) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.raw.Close() })
	return err
}

func (s *stream) fail(err error) {
	s.Err = err
	_ = s.Close()
}

// step reads one data line and queues its events.
func (s *stream) step() {
	data, err := s.raw.RecvRaw()
	if err == io.EOF {
		s.end()
		return
	}
	if err != nil {
		s.fail(s.p.streamError(s.ctx, err))
		return
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		s.fail(s.p.newError(providers.ErrServer, 0, fmt.Errorf("malformed stream chunk %.200q: %w", data, err)))
		return
	}
	if c.Error != nil {
		s.fail(s.p.errorEvent(c.Error.Type, c.Error.Code, c.Error.Message))
		return
	}
	if c.Usage != nil {
		s.usage = c.Usage.usage()
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		reasoning := d.ReasoningContent
		if reasoning == nil {
			reasoning = d.Reasoning
		}
		if reasoning != nil && *reasoning != "" {
			s.Events = append(s.Events, providers.Event{Kind: providers.EventReasoning, Text: *reasoning})
		}
		for _, text := range []*string{d.Content, d.Refusal} {
			if text != nil && *text != "" {
				s.sawText = true
				s.Events = append(s.Events, providers.Event{Kind: providers.EventText, Text: *text})
			}
		}
		for _, tc := range d.ToolCalls {
			current, err := s.calls.add(tc)
			if err != nil {
				s.fail(s.p.newError(providers.ErrServer, 0, err))
				return
			}
			s.emitPart(current)
			s.emit(s.calls.flush(current))
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.sawFinish = true
			s.finish = *ch.FinishReason
			s.emit(s.calls.flush(nil))
		}
		if ch.Usage != nil {
			s.usage = ch.Usage.usage()
		}
	}
}

// emit queues complete calls, each after the part with the rest of its
// arguments (if any are not sent yet).
func (s *stream) emit(calls []*pendingCall) {
	for _, c := range calls {
		s.emitPart(c)
		s.Events = append(s.Events, providers.Event{Kind: providers.EventToolCall, ToolCall: c.call})
	}
}

// emitPart queues the arguments of c not sent in a part yet, or the part
// announcing c; nothing before c has a name.
func (s *stream) emitPart(c *pendingCall) {
	if p := c.part(); p != nil {
		s.Events = append(s.Events, providers.Event{Kind: providers.EventToolCallPart, Part: p})
	}
}

// end finishes the response once the stream is over.
func (s *stream) end() {
	defer s.Close()
	if !s.w.sawDone && !s.sawFinish {
		s.Err = s.p.newError(providers.ErrConnection, 0, errTruncated)
		return
	}
	stop := stopReason(s.finish)
	rest, err := s.calls.flushAll(stop == providers.StopMaxTokens)
	if err != nil {
		s.Err = s.p.newError(providers.ErrServer, 0, err)
		return
	}
	s.emit(rest)
	if !s.sawText && s.calls.emitted == 0 {
		msg := "the model returned no text and no tool call"
		if stop == providers.StopMaxTokens {
			msg += " before the output limit cut it off (finish_reason length)"
		}
		s.Err = s.p.newError(providers.ErrEmptyResponse, 0, errors.New(msg))
		return
	}
	if s.usage != nil {
		s.Events = append(s.Events, providers.Event{Kind: providers.EventUsage, Usage: s.usage})
	}
	if stop != "" {
		s.Events = append(s.Events, providers.Event{Kind: providers.EventStop, Stop: stop})
	}
	s.Finished = true
}

// stopReason maps a finish_reason ("" when none came).
func stopReason(finish string) providers.StopReason {
	switch finish {
	case "":
		return ""
	case "stop":
		return providers.StopEnd
	case "tool_calls", "function_call":
		return providers.StopToolUse
	case "length":
		return providers.StopMaxTokens
	case "content_filter":
		return providers.StopContentFilter
	}
	return providers.StopOther
}

// pendingCall is a tool call being assembled from fragments.
type pendingCall struct {
	id   string
	name string
	args strings.Builder
	// synthetic: id was made up here (the API sent none before the call
	// was announced in a part); an id sent later is ignored.
	synthetic bool
	// announced: a part of the call was sent; sent is how much of args
	// the parts carried.
	announced bool
	sent      int
	emitted   bool
	call      *providers.ToolCall // once emitted
}

// part is the next part of c: the arguments not sent yet, or an empty
// one announcing c; nil when c has no name yet or nothing is new.
func (c *pendingCall) part() *providers.ToolCallPart {
	if c.name == "" || (c.announced && c.sent == c.args.Len()) {
		return nil
	}
	if c.id == "" {
		c.id, c.synthetic = newCallID(), true
	}
	args := c.args.String()[c.sent:]
	c.announced, c.sent = true, c.args.Len()
	return &providers.ToolCallPart{ID: c.id, Name: c.name, Arguments: args}
}

// ready: the call has a name and its arguments are complete JSON, so no
// further fragment can belong to it.
func (c *pendingCall) ready() bool {
	return c.name != "" && json.Valid([]byte(c.args.String()))
}

// accumulator assembles tool calls from fragments; see the package
// documentation for when a call is emitted.
type accumulator struct {
	calls   []*pendingCall // in order of first fragment
	byIndex map[int]*pendingCall
	last    *pendingCall
	next    int // calls[:next] were emitted (or dropped)
	emitted int
}

// add routes a fragment to its call and returns that call.
func (a *accumulator) add(d toolCallDelta) (*pendingCall, error) {
	var c *pendingCall
	if d.Index != nil {
		c = a.byIndex[*d.Index]
	} else {
		c = a.last
	}
	// A different id, or a different name, on the same index (or on an
	// index-less fragment) starts a new call.
	if c != nil && ((d.ID != "" && c.id != "" && !c.synthetic && d.ID != c.id) ||
		(d.Function.Name != "" && c.name != "" && d.Function.Name != c.name)) {
		c = nil
	}
	if c == nil {
		c = &pendingCall{}
		a.calls = append(a.calls, c)
		if d.Index != nil {
			a.byIndex[*d.Index] = c
		}
	}
	a.last = c
	args := d.arguments()
	if c.emitted {
		if strings.TrimSpace(args) != "" {
			return nil, fmt.Errorf("protocol error: arguments %.100q arrived for tool call %s (%s) after it was complete", args, c.id, c.name)
		}
		return c, nil
	}
	if c.id == "" {
		c.id = d.ID
	}
	if c.name == "" {
		c.name = d.Function.Name
	}
	c.args.WriteString(args)
	return c, nil
}

// flush emits, in order, the calls that are ready, stopping at the first
// one that is not or at current (the call the last fragment went to, which
// may still grow; nil when the choice finished).
func (a *accumulator) flush(current *pendingCall) []*pendingCall {
	var out []*pendingCall
	for a.next < len(a.calls) {
		c := a.calls[a.next]
		if c == current || !c.ready() {
			break
		}
		a.emit(c)
		out = append(out, c)
	}
	return out
}

// flushAll emits every call left at the end of the stream. When the
// output limit cut the response (truncated), a call whose arguments are not
// complete JSON is emitted as Truncated.
func (a *accumulator) flushAll(truncated bool) ([]*pendingCall, error) {
	var out []*pendingCall
	for a.next < len(a.calls) {
		c := a.calls[a.next]
		switch {
		case c.name != "":
			cut := truncated && !c.ready()
			a.emit(c).Truncated = cut
			out = append(out, c)
		case strings.TrimSpace(c.args.String()) == "":
			a.next++ // a stray fragment with nothing in it
		default:
			return nil, fmt.Errorf("protocol error: tool call %q has arguments but no name", c.id)
		}
	}
	return out, nil
}

func (a *accumulator) emit(c *pendingCall) *providers.ToolCall {
	if c.id == "" {
		c.id = newCallID()
	}
	c.emitted = true
	a.next++
	a.emitted++
	c.call = &providers.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}
	return c.call
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
