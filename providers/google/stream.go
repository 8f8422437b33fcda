package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/kosong-host/kosong-host/providers"
)

type stream struct {
	providers.EventQueue

	ctx    context.Context
	cancel context.CancelFunc
	p      *Provider

	mu   sync.Mutex // guards next and stop
	next func() (*genai.GenerateContentResponse, error, bool)
	stop func()
	// The first chunk, read by Stream.
	pending   *genai.GenerateContentResponse
	pendingOK bool
	primed    bool

	sawText   bool
	calls     int
	finish    genai.FinishReason
	blocked   string // promptFeedback.blockReason
	usage     providers.Usage
	sawUsage  bool
	reasoning strings.Builder
	sigs      signatures
	signature string
	closeOnce sync.Once
}

var _ providers.Stream = (*stream)(nil)

// Next implements providers.Stream.
func (s *stream) Next() (providers.Event, error) { return s.Pop(s.step) }

// Close implements providers.Stream. It may be called while Next waits:
// the request is cancelled.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.stop()
	})
	return nil
}

// ReasoningSignature is the response's thought signatures, to keep as
// providers.Message.ReasoningSignature on the assistant message (empty when
// there was none). It is set once Next returned io.EOF.
func (s *stream) ReasoningSignature() string { return s.signature }

func (s *stream) pull() (*genai.GenerateContentResponse, error, bool) {
	if !s.primed {
		s.primed = true
		return s.pending, nil, s.pendingOK
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.recovered(s.next)
}

// recovered calls next, turning a panic into an error: the SDK panics on
// some malformed chunks (a null candidate), and its iterator hands the
// panic to the caller.
func (p *Provider) recovered(next func() (*genai.GenerateContentResponse, error, bool)) (resp *genai.GenerateContentResponse, err error, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			resp, err, ok = nil, p.newError(providers.ErrServer, 0, errors.New("malformed stream chunk: "+oneLine(fmt.Sprint(r)))), false
		}
	}()
	return next()
}

func (s *stream) fail(err error) {
	s.Err = err
	_ = s.Close()
}

func (s *stream) emit(ev providers.Event) { s.Events = append(s.Events, ev) }

// step reads one chunk and queues its events.
func (s *stream) step() {
	resp, err, ok := s.pull()
	if err != nil {
		s.fail(s.p.classify(s.ctx, err))
		return
	}
	if !ok {
		if err := s.p.ctxError(s.ctx); err != nil {
			s.fail(err)
			return
		}
		s.end()
		return
	}
	if resp == nil {
		return
	}
	if u := resp.UsageMetadata; u != nil {
		s.sawUsage = true
		s.usage = providers.Usage{
			InputTokens:     int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
			OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			CacheReadTokens: int64(u.CachedContentTokenCount),
		}
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.blocked = string(pf.BlockReason)
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return
	}
	cand := resp.Candidates[0]
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		s.finish = cand.FinishReason
	}
	if cand.Content == nil {
		return
	}
	for _, part := range cand.Content.Parts {
		if part == nil {
			continue
		}
		switch {
		case part.FunctionCall != nil:
			fc := part.FunctionCall
			if strings.TrimSpace(fc.Name) == "" {
				s.fail(s.p.newError(providers.ErrServer, 0, errors.New("protocol error: a function call has no name")))
				return
			}
			id := fc.ID
			if id == "" {
				id = generatedID(fc.Name, s.calls)
			}
			args := "{}"
			if len(fc.Args) > 0 {
				b, err := json.Marshal(fc.Args)
				if err != nil {
					s.fail(s.p.newError(providers.ErrServer, 0, fmt.Errorf("function call %s: arguments: %w", fc.Name, err)))
					return
				}
				args = string(b)
			}
			if len(part.ThoughtSignature) > 0 {
				if s.sigs.Calls == nil {
					s.sigs.Calls = map[string][]byte{}
				}
				s.sigs.Calls[id] = part.ThoughtSignature
			}
			s.calls++
			// Gemini sends each call whole: one part with all of it,
			// so a client sees every call announced the same way.
			s.emit(providers.Event{Kind: providers.EventToolCallPart, Part: &providers.ToolCallPart{ID: id, Name: fc.Name, Arguments: args}})
			s.emit(providers.Event{Kind: providers.EventToolCall, ToolCall: &providers.ToolCall{ID: id, Name: fc.Name, Arguments: args}})
		case part.Thought:
			if len(part.ThoughtSignature) > 0 {
				s.sigs.Thought = part.ThoughtSignature
			}
			if part.Text != "" {
				s.reasoning.WriteString(part.Text)
				s.emit(providers.Event{Kind: providers.EventReasoning, Text: part.Text})
			}
		default:
			if len(part.ThoughtSignature) > 0 {
				s.sigs.Text = part.ThoughtSignature
			}
			if part.Text != "" {
				s.sawText = true
				s.emit(providers.Event{Kind: providers.EventText, Text: part.Text})
			}
		}
	}
}

// end finishes the response once the stream is over.
func (s *stream) end() {
	defer s.Close()
	switch {
	case s.blocked != "" && !s.sawText && s.calls == 0:
		s.Err = s.p.newError(providers.ErrBadRequest, 0, fmt.Errorf("the prompt was blocked (%s)", s.blocked))
		return
	case s.finish == "":
		s.Err = s.p.newError(providers.ErrConnection, 0, errTruncated)
		return
	case !s.sawText && s.calls == 0:
		s.Err = s.p.newError(providers.ErrEmptyResponse, 0, fmt.Errorf("the model returned no text and no tool call (finish reason %s)", s.finish))
		return
	}
	s.signature = s.sigs.encode()
	if s.sawUsage {
		u := s.usage
		s.emit(providers.Event{Kind: providers.EventUsage, Usage: &u})
	}
	s.emit(providers.Event{Kind: providers.EventStop, Stop: stopReason(s.finish, s.calls > 0)})
	s.Finished = true
}

// stopReason maps a finish reason; Gemini says STOP after function calls
// too.
func stopReason(r genai.FinishReason, calls bool) providers.StopReason {
	switch r {
	case genai.FinishReasonStop:
		if calls {
			return providers.StopToolUse
		}
		return providers.StopEnd
	case genai.FinishReasonMaxTokens:
		return providers.StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety:
		return providers.StopContentFilter
	}
	return providers.StopOther
}

var errTruncated = errors.New("the stream ended before the response was complete (no finish reason)")

// signatures are a response's thought signatures, by the part they came on.
type signatures struct {
	Thought []byte `json:"thought,omitempty"`
	Text    []byte `json:"text,omitempty"`
	// Calls are keyed by call id (generated ones included).
	Calls map[string][]byte `json:"calls,omitempty"`
}

type storedSignatures struct {
	Gemini *signatures `json:"gemini"`
}

func (g signatures) encode() string {
	if len(g.Thought) == 0 && len(g.Text) == 0 && len(g.Calls) == 0 {
		return ""
	}
	b, err := json.Marshal(storedSignatures{Gemini: &g})
	if err != nil {
		return ""
	}
	return string(b)
}

// decodeSignatures reads a ReasoningSignature written by this provider;
// anything else gives none.
func decodeSignatures(s string) signatures {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return signatures{}
	}
	var stored storedSignatures
	if json.Unmarshal([]byte(s), &stored) != nil || stored.Gemini == nil {
		return signatures{}
	}
	return *stored.Gemini
}
