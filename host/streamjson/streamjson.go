// Package streamjson is the public stream-json schema of kosong-host: the
// events `kosong-host run --output-format stream-json` writes, one JSON
// object a line (documented in docs/stream-json.md), and the mapping
// of the agent loop's events onto them.
//
// Every event has a "type". A run writes a session event first; each turn
// writes its step, text, tool and usage events and ends with turn_end; a
// one-shot run ends with a result event.
package streamjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/providers"
)

// The stream-json event types.
type (
	// SessionEvent opens a run.
	SessionEvent struct {
		Type      string   `json:"type"` // "session"
		SessionID string   `json:"session_id"`
		StateDir  string   `json:"state_dir"`
		Agent     string   `json:"agent"`
		Provider  string   `json:"provider"`
		Model     string   `json:"model"`
		Tools     []string `json:"tools"`
	}
	StepStartEvent struct {
		Type    string `json:"type"` // "step_start"
		Step    int    `json:"step"`
		Attempt int    `json:"attempt"`
	}
	TextEvent struct {
		Type string `json:"type"` // "text" or "reasoning"
		Step int    `json:"step"`
		Text string `json:"text"`
	}
	ToolCallEvent struct {
		Type      string `json:"type"` // "tool_call"
		Step      int    `json:"step"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Duplicate bool   `json:"duplicate"`
		// Truncated: the output limit cut the call's arguments off; it
		// was not run.
		Truncated bool `json:"truncated,omitempty"`
	}
	ToolResultEvent struct {
		Type       string `json:"type"` // "tool_result"
		Step       int    `json:"step"`
		ID         string `json:"id"`
		Name       string `json:"name"`
		Status     string `json:"status"`
		IsError    bool   `json:"is_error"`
		Brief      string `json:"brief"`
		Message    string `json:"message"`
		Output     string `json:"output"`
		Feedback   string `json:"feedback,omitempty"`
		DurationMS int64  `json:"duration_ms"`
		Repeat     int    `json:"repeat"`
		Cancelled  bool   `json:"cancelled"`
		// Reminder is the repeat-guard reminder the model saw with the
		// result.
		Reminder string `json:"reminder,omitempty"`
	}
	CompactionEvent struct {
		Type       string `json:"type"` // "compaction"
		Tokens     int64  `json:"tokens"`
		Summarised int    `json:"summarised"`
		Kept       int    `json:"kept"`
		Error      string `json:"error,omitempty"`
	}
	ToolProgressEvent struct {
		Type     string  `json:"type"` // "tool_progress"
		ID       string  `json:"id"`
		Name     string  `json:"name"`
		Progress float64 `json:"progress"`
		Total    float64 `json:"total,omitempty"`
		Message  string  `json:"message,omitempty"`
	}
	// ApprovalEvent: an approval request and its answer. WaitMS is how long
	// the user took to answer (0 when nobody was asked).
	ApprovalEvent struct {
		Type        string `json:"type"` // "approval"
		ToolCallID  string `json:"tool_call_id"`
		Plugin      string `json:"plugin,omitempty"`
		Tool        string `json:"tool"`
		Action      string `json:"action"`
		Description string `json:"description"`
		Approved    bool   `json:"approved"`
		Feedback    string `json:"feedback,omitempty"`
		Answer      string `json:"answer"`
		ForSession  bool   `json:"for_session"`
		WaitMS      int64  `json:"wait_ms"`
	}
	UsageEvent struct {
		Type string `json:"type"` // "usage"
		Step int    `json:"step"`
		providers.Usage
		// CostUSD is the response's cost at the model's prices (absent
		// when the configuration gives none).
		CostUSD *float64 `json:"cost_usd,omitempty"`
	}
	// LimitEvent: the run reached a limit (--max-turns, --max-tokens,
	// --max-budget-usd) and the turn stopped before its next step.
	LimitEvent struct {
		Type    string          `json:"type"`   // "limit"
		Reason  string          `json:"reason"` // max_turns, max_tokens or max_budget_usd
		Message string          `json:"message"`
		Turns   int             `json:"turns"`
		Usage   providers.Usage `json:"usage"`
		CostUSD float64         `json:"cost_usd"`
	}
	// RetryEvent: the step is retried; KeptCalls are the calls of the
	// failed attempt that ran, kept in the history with their results.
	RetryEvent struct {
		Type        string    `json:"type"` // "retry"
		Step        int       `json:"step"`
		Attempt     int       `json:"attempt"`
		MaxAttempts int       `json:"max_attempts"`
		DelayMS     int64     `json:"delay_ms"`
		Error       string    `json:"error"`
		KeptCalls   []CallRef `json:"kept_calls"`
	}
	// CallRef names a tool call.
	CallRef struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	// StopEvent: why the model's response ended; TruncatedCalls were cut
	// off by the output limit and not run.
	StopEvent struct {
		Type           string    `json:"type"` // "stop"
		Step           int       `json:"step"`
		StopReason     string    `json:"stop_reason"`
		TruncatedCalls []CallRef `json:"truncated_calls,omitempty"`
	}
	// InterruptedEvent: the user interrupted the step; Calls are its tool
	// calls, kept in the history with their results.
	InterruptedEvent struct {
		Type  string    `json:"type"` // "interrupted"
		Step  int       `json:"step"`
		Calls []CallRef `json:"calls"`
	}
	ErrorEvent struct {
		Type      string `json:"type"` // "error"
		Error     string `json:"error"`
		Retryable bool   `json:"retryable"`
	}
	TurnEndEvent struct {
		Type   string          `json:"type"` // "turn_end"
		Steps  int             `json:"steps"`
		Reason string          `json:"reason"`
		Usage  providers.Usage `json:"usage"`
		// CostUSD is the turn's cost (absent when unpriced).
		CostUSD *float64 `json:"cost_usd,omitempty"`
		// StopReason is the model's stop reason of the last response.
		StopReason string `json:"stop_reason,omitempty"`
		Error      string `json:"error,omitempty"`
	}
	// ResultEvent closes a one-shot run: the final answer (the assistant
	// text of the turn's last step), why the turn stopped, its usage, the
	// session, whether any tool call was refused, and the exit code the
	// run exits with.
	ResultEvent struct {
		Type string `json:"type"` // "result"
		// Subtype says how the run ended, as Claude Code's: success,
		// error_max_turns, error_max_tokens, error_max_budget_usd or
		// error_during_execution.
		Subtype    string          `json:"subtype"`
		Text       string          `json:"text"`
		StopReason string          `json:"stop_reason"`
		Usage      providers.Usage `json:"usage"`
		SessionID  string          `json:"session_id"`
		Steps      int             `json:"steps"`
		Refused    int             `json:"refused"`
		ExitCode   int             `json:"exit_code"`
		Error      string          `json:"error,omitempty"`
		// CostUSD is the turn's cost, TotalCostUSD the run's (absent
		// when unpriced); NumTurns counts the run's model responses.
		CostUSD      *float64 `json:"cost_usd,omitempty"`
		TotalCostUSD *float64 `json:"total_cost_usd,omitempty"`
		NumTurns     int      `json:"num_turns"`
	}
)

var statusOf = map[toolset.Kind]string{toolset.Ok: "ok", toolset.Failed: "error", toolset.Rejected: "rejected"}

// FromLoop is the stream-json form of a loop event (nil for none).
func FromLoop(e loop.Event) any {
	switch e := e.(type) {
	case loop.StepStarted:
		return StepStartEvent{Type: "step_start", Step: e.Step, Attempt: e.Attempt}
	case loop.TextDelta:
		return TextEvent{Type: "text", Step: e.Step, Text: e.Text}
	case loop.ReasoningDelta:
		return TextEvent{Type: "reasoning", Step: e.Step, Text: e.Text}
	case loop.ToolCallStarted:
		return ToolCallEvent{Type: "tool_call", Step: e.Step, ID: e.Call.ID, Name: e.Call.Name, Arguments: e.Call.Arguments,
			Duplicate: e.Duplicate, Truncated: e.Call.Truncated}
	case loop.ToolCallFinished:
		r := e.Result
		return ToolResultEvent{Type: "tool_result", Step: e.Step, ID: e.Call.ID, Name: e.Call.Name, Status: statusOf[r.Kind],
			IsError: r.IsError(), Brief: r.Brief, Message: r.Message, Output: r.OutputText(), Feedback: r.Feedback,
			DurationMS: e.Duration.Milliseconds(), Repeat: e.Repeat, Cancelled: e.Cancelled, Reminder: e.Reminder}
	case loop.Compacted:
		ev := CompactionEvent{Type: "compaction", Tokens: e.Tokens, Summarised: e.Summarised, Kept: e.Kept}
		if e.Err != nil {
			ev.Error = e.Err.Error()
		}
		return ev
	case loop.ToolProgress:
		return ToolProgressEvent{Type: "tool_progress", ID: e.ToolCallID, Name: e.ToolName, Progress: e.Progress,
			Total: e.Total, Message: e.Message}
	case loop.ApprovalDecided:
		return ApprovalEvent{Type: "approval", ToolCallID: e.ToolCallID, Plugin: e.Plugin, Tool: e.ToolName, Action: e.Action,
			Description: e.Description, Approved: e.Approved, Feedback: e.Feedback, Answer: e.Answer, ForSession: e.ForSession,
			WaitMS: e.Waited.Milliseconds()}
	case loop.UsageReported:
		return UsageEvent{Type: "usage", Step: e.Step, Usage: e.Usage, CostUSD: Cost(e.CostUSD, e.Priced)}
	case loop.LimitReached:
		return LimitEvent{Type: "limit", Reason: string(e.Reason), Message: e.Text, Turns: e.Spent.Turns, Usage: e.Spent.Usage,
			CostUSD: e.Spent.CostUSD}
	case loop.StepRetried:
		return RetryEvent{Type: "retry", Step: e.Step, Attempt: e.Attempt, MaxAttempts: e.MaxAttempts,
			DelayMS: e.Delay.Milliseconds(), Error: e.Err.Error(), KeptCalls: callRefs(e.Kept)}
	case loop.ResponseStopped:
		ev := StopEvent{Type: "stop", Step: e.Step, StopReason: string(e.Reason)}
		if len(e.Truncated) > 0 {
			ev.TruncatedCalls = callRefs(e.Truncated)
		}
		return ev
	case loop.StepInterrupted:
		return InterruptedEvent{Type: "interrupted", Step: e.Step, Calls: callRefs(e.Calls)}
	case loop.TurnFailed:
		return ErrorEvent{Type: "error", Error: e.Err.Error(), Retryable: providers.IsRetryable(e.Err)}
	case loop.TurnEnded:
		ev := TurnEndEvent{Type: "turn_end", Steps: e.Steps, Reason: string(e.Reason), Usage: e.Usage, StopReason: string(e.ModelStop),
			CostUSD: Cost(e.CostUSD, e.Priced)}
		if e.Err != nil {
			ev.Error = e.Err.Error()
		}
		return ev
	}
	return guardEvent(e)
}

// Cost is the cost field of an event: absent (nil) when unpriced.
func Cost(usd float64, priced bool) *float64 {
	if !priced {
		return nil
	}
	return &usd
}

// Subtype is the result event's subtype of a turn that ended for reason
// (loop.StopReason) with err.
func Subtype(reason string, err error) string {
	switch {
	case loop.StopReason(reason).AtLimit():
		return "error_" + reason
	case err != nil:
		return "error_during_execution"
	}
	return "success"
}

func callRefs(calls []providers.ToolCall) []CallRef {
	refs := make([]CallRef, len(calls))
	for i, c := range calls {
		refs[i] = CallRef{ID: c.ID, Name: c.Name}
	}
	return refs
}

// Writer writes events, one JSON object a line, each line at most
// limits.StreamJSONLineBytes (see bound); it is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

// NewWriter returns a Writer writing to out.
func NewWriter(out io.Writer) *Writer {
	w := &Writer{out: out}
	w.enc = newEncoder(&w.buf)
	return w
}

func newEncoder(b *bytes.Buffer) *json.Encoder {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return enc
}

// Write writes one event.
func (w *Writer) Write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	if w.buf.Len() > limits.StreamJSONLineBytes {
		line := bound(v, w.buf.Len())
		w.buf.Reset()
		w.buf.Write(line)
	}
	_, err := w.out.Write(w.buf.Bytes())
	return err
}

// bound returns the line of an event whose line, of size bytes, is over
// limits.StreamJSONLineBytes: its longest string fields cut, marked
// limits.TruncatedMarker, until it fits. An event that still does not fit
// (its bulk is not in its own strings) becomes an error event saying so.
func bound(v any, size int) []byte {
	var b bytes.Buffer
	enc := newEncoder(&b)
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
		ev := reflect.New(rv.Type()).Elem()
		ev.Set(rv)
		for range 8 {
			f, ok := longestString(ev)
			if !ok {
				break
			}
			s := f.String()
			// Escaping may make the encoded field longer than the string:
			// cut in proportion, with room for the marker.
			quoted, _ := json.Marshal(s)
			keep := int(float64(len(s)) * float64(len(quoted)-(size-limits.StreamJSONLineBytes)) / float64(len(quoted)))
			keep -= len(limits.TruncatedMarker) + 64
			if keep >= len(s) {
				keep = len(s) - 1
			}
			f.SetString(cutBytes(s, max(keep, 0)) + limits.TruncatedMarker)
			b.Reset()
			if enc.Encode(ev.Interface()) != nil {
				break
			}
			if size = b.Len(); size <= limits.StreamJSONLineBytes {
				return b.Bytes()
			}
		}
	}
	b.Reset()
	_ = enc.Encode(ErrorEvent{Type: "error", Error: fmt.Sprintf("a %s event of %s was left out: it is over the stream-json line limit of %s",
		eventType(v), limits.Size(size), limits.Size(limits.StreamJSONLineBytes))})
	return b.Bytes()
}

// longestString is the longest string field of the struct ev, if any is
// longer than the marker.
func longestString(ev reflect.Value) (reflect.Value, bool) {
	var best reflect.Value
	for i := range ev.NumField() {
		f := ev.Field(i)
		if f.Kind() == reflect.String && f.CanSet() && ev.Type().Field(i).Name != "Type" &&
			f.Len() > len(limits.TruncatedMarker) && (!best.IsValid() || f.Len() > best.Len()) {
			best = f
		}
	}
	return best, best.IsValid()
}

// eventType is the "type" of an event struct ("" when it has none).
func eventType(v any) string {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Struct {
		if f := rv.FieldByName("Type"); f.IsValid() && f.Kind() == reflect.String {
			return f.String()
		}
	}
	return ""
}

// cutBytes returns the longest prefix of s of at most n bytes that does not
// split a character.
func cutBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
