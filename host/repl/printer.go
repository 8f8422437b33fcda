package repl

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Info describes a run, for the banner (text) or the session event
// (stream-json).
type Info struct {
	SessionID string
	StateDir  string
	Agent     string
	Provider  string
	Model     string
	Tools     []string
}

// Printer shows a run: the loop's events, the approval decisions and the
// run's start. It is safe for concurrent use (approvals arrive from the
// tools' goroutines).
type Printer interface {
	loop.Observer
	// Start shows the run's identity.
	Start(Info)
	// Pause stops transient output (the spinner) before the terminal is
	// used to ask the user something.
	Pause()
}

// TextOptions configure a TextPrinter.
type TextOptions struct {
	// TTY enables the spinner, colours and the model's reasoning (dimmed).
	TTY bool
	// Now returns the time; nil means time.Now. For the spinner.
	Now func() time.Time
}

// TextPrinter shows a run for a human: the assistant's text as it streams,
// a line when each tool call starts and one when it ends (name, brief,
// duration), retries and errors on errOut, and the token usage after each
// turn.
type TextPrinter struct {
	out, errOut io.Writer
	opts        TextOptions

	mu        sync.Mutex
	midLine   bool // the last thing written to out did not end a line
	reasoning bool // reasoning is being written
	spin      *spinner
}

// NewTextPrinter returns a TextPrinter writing to out and errOut.
func NewTextPrinter(out, errOut io.Writer, opts TextOptions) *TextPrinter {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &TextPrinter{out: out, errOut: errOut, opts: opts}
}

const (
	ansiDim   = "\033[2m"
	ansiRed   = "\033[31m"
	ansiGreen = "\033[32m"
	ansiReset = "\033[0m"
)

func (p *TextPrinter) style(code, s string) string {
	if !p.opts.TTY {
		return s
	}
	return code + s + ansiReset
}

// Start prints the banner.
func (p *TextPrinter) Start(info Info) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "%s\n", p.style(ansiDim, fmt.Sprintf("kosong-host · agent %s · %s/%s · %d tools · session %s",
		info.Agent, info.Provider, info.Model, len(info.Tools), info.SessionID)))
}

// Pause stops the spinner.
func (p *TextPrinter) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopSpinner()
}

// Observe prints one event.
func (p *TextPrinter) Observe(e loop.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case loop.StepStarted:
		p.startSpinner()
	case loop.TextDelta:
		p.stopSpinner()
		if p.reasoning {
			p.reasoning = false
			p.newline()
		}
		p.write(e.Text)
	case loop.ReasoningDelta:
		if !p.opts.TTY {
			return
		}
		p.stopSpinner()
		p.reasoning = true
		p.write(p.style(ansiDim, e.Text))
	case loop.ToolCallStarted:
		p.stopSpinner()
		p.line(fmt.Sprintf("• %s %s", e.Call.Name, oneLine(e.Call.Arguments, 120)))
	case loop.ToolCallFinished:
		p.stopSpinner()
		mark, brief := p.style(ansiGreen, "✓"), Brief(e.Result)
		switch {
		case e.Cancelled:
			mark, brief = p.style(ansiRed, "✗"), "cancelled"
		case e.Result.IsError():
			mark = p.style(ansiRed, "✗")
		}
		p.line(fmt.Sprintf("  %s %s: %s %s", mark, e.Call.Name, brief, p.style(ansiDim, "("+formatDuration(e.Duration)+")")))
		if e.Reminder != "" {
			p.line(p.style(ansiDim, fmt.Sprintf("  ! the same call %d times in a row: the model was reminded", e.Repeat)))
		}
	case loop.ToolProgress:
		p.stopSpinner()
		p.line(p.style(ansiDim, "  … "+e.ToolName+": "+progressText(e)))
	case loop.Compacted:
		p.stopSpinner()
		p.newline()
		p.line(p.style(ansiDim, e.String()))
	case loop.StepRetried:
		p.stopSpinner()
		p.newline()
		kept := ""
		if len(e.Kept) > 0 {
			kept = fmt.Sprintf("; keeping the %s that ran: %s", pluralWord(len(e.Kept), "tool call"), callNames(e.Kept))
		}
		fmt.Fprintf(p.errOut, "! %v; retrying in %s (attempt %d of %d)%s\n", e.Err, formatDuration(e.Delay), e.Attempt, e.MaxAttempts, kept)
	case loop.ResponseStopped:
		if w := stopWarning(e); w != "" {
			p.stopSpinner()
			p.newline()
			fmt.Fprintln(p.errOut, w)
		}
	case loop.ApprovalDecided:
		p.approval(e)
	case loop.HookRan, loop.PermissionDecided, loop.AgentReloaded:
		if line, warn := guardText(e); line != "" {
			p.stopSpinner()
			p.newline()
			if warn {
				fmt.Fprintln(p.errOut, line)
			} else {
				p.line(p.style(ansiDim, line))
			}
		}
	case loop.TurnFailed:
		p.stopSpinner()
		p.newline()
		fmt.Fprintf(p.errOut, "error: %v\n", e.Err)
	case loop.TurnEnded:
		p.stopSpinner()
		switch e.Reason {
		case loop.StopCancelled:
			p.line(p.style(ansiDim, "Interrupted."))
		case loop.StopToolCallRepeat:
			p.line(p.style(ansiDim, "Stopped: the model kept making the same tool call."))
		}
		summary := plural(e.Steps, "step")
		if e.Usage.Total() > 0 {
			summary += fmt.Sprintf(" · %s tokens in · %s out", thousands(e.Usage.InputTokens), thousands(e.Usage.OutputTokens))
		}
		p.line(p.style(ansiDim, "["+summary+"]"))
	}
}

func (p *TextPrinter) approval(e loop.ApprovalDecided) {
	var s string
	switch {
	case e.Answer == AnswerYolo:
		return
	case e.Answer == AnswerUnattended:
		s = fmt.Sprintf("  ! %s: %s rejected: no one to ask for approval; run with --yolo to allow it", e.ToolName, e.Action)
	case e.Answer == AnswerSession:
		s = fmt.Sprintf("  %s: %s (approved for this session)", e.ToolName, e.Action)
	case e.ForSession:
		s = fmt.Sprintf("  %s: %s approved for this session", e.ToolName, e.Action)
	case e.Approved:
		s = fmt.Sprintf("  %s: %s approved", e.ToolName, e.Action)
	case e.Feedback != "":
		s = fmt.Sprintf("  %s: %s rejected: %s", e.ToolName, e.Action, e.Feedback)
	default:
		s = fmt.Sprintf("  %s: %s rejected", e.ToolName, e.Action)
	}
	p.stopSpinner()
	p.line(p.style(ansiDim, s))
}

func (p *TextPrinter) write(s string) {
	if s == "" {
		return
	}
	io.WriteString(p.out, s)
	p.midLine = !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\n"+ansiReset)
}

// newline ends a started line.
func (p *TextPrinter) newline() {
	if p.midLine {
		io.WriteString(p.out, "\n")
		p.midLine = false
	}
}

// line writes a whole line, on a line of its own.
func (p *TextPrinter) line(s string) {
	p.reasoning = false
	p.newline()
	io.WriteString(p.out, s+"\n")
}

// spinner shows "⠋ thinking 1.2s" on a TTY while the model is silent.
type spinner struct {
	stop chan struct{}
	done chan struct{}
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// startSpinner starts the spinner; p.mu is held.
func (p *TextPrinter) startSpinner() {
	if !p.opts.TTY || p.spin != nil {
		return
	}
	p.newline()
	s := &spinner{stop: make(chan struct{}), done: make(chan struct{})}
	p.spin = s
	start := p.opts.Now()
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			p.mu.Lock()
			select {
			case <-s.stop:
				p.mu.Unlock()
				return
			default:
			}
			fmt.Fprintf(p.out, "\r%s %s", spinFrames[i%len(spinFrames)], p.style(ansiDim, "thinking "+formatDuration(p.opts.Now().Sub(start))))
			p.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// stopSpinner stops the spinner and clears its line; p.mu is held.
func (p *TextPrinter) stopSpinner() {
	if p.spin == nil {
		return
	}
	close(p.spin.stop)
	p.spin = nil
	io.WriteString(p.out, "\r\033[K")
}

// Brief is the one-line summary of a result shown to the user: its brief,
// else the first line of its message, else of its output.
func Brief(r toolset.Result) string {
	for _, s := range []string{r.Brief, r.Message, r.OutputText()} {
		if s = oneLine(s, 100); s != "" {
			return s
		}
	}
	if r.IsError() {
		return "error"
	}
	return "done"
}

// oneLine is the first non-empty line of s, cut to max runes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// stopWarning is the warning for a response the provider stopped early
// ("" for a normal stop).
func stopWarning(e loop.ResponseStopped) string {
	switch e.Reason {
	case providers.StopMaxTokens:
		if len(e.Truncated) > 0 {
			return fmt.Sprintf("! the response was cut off by the output token limit (max_tokens): %s not run (%s); the model was told to retry in smaller parts",
				pluralWord(len(e.Truncated), "tool call"), callNames(e.Truncated))
		}
		return "! the response was cut off by the output token limit (max_tokens): the answer is incomplete"
	case providers.StopContentFilter:
		return "! the provider stopped the response (content_filter)"
	}
	return ""
}

func callNames(calls []providers.ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// pluralWord is "tool call" or "2 tool calls".
func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// JSONPrinter writes one JSON object a line for every event; the schema is
// in the README (stream-json).
type JSONPrinter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

// NewJSONPrinter returns a JSONPrinter writing to out.
func NewJSONPrinter(out io.Writer) *JSONPrinter {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return &JSONPrinter{enc: enc}
}

// Pause does nothing: there is no transient output.
func (p *JSONPrinter) Pause() {}

// Start writes the session event.
func (p *JSONPrinter) Start(info Info) {
	tools := info.Tools
	if tools == nil {
		tools = []string{}
	}
	p.write(SessionEvent{Type: "session", SessionID: info.SessionID, StateDir: info.StateDir, Agent: info.Agent,
		Provider: info.Provider, Model: info.Model, Tools: tools})
}

// Observe writes one event.
func (p *JSONPrinter) Observe(e loop.Event) {
	if v := JSONEvent(e); v != nil {
		p.write(v)
	}
}

func (p *JSONPrinter) write(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(v)
}

// The stream-json event types (see the README (stream-json)).
type (
	SessionEvent struct {
		Type      string   `json:"type"`
		SessionID string   `json:"session_id"`
		StateDir  string   `json:"state_dir"`
		Agent     string   `json:"agent"`
		Provider  string   `json:"provider"`
		Model     string   `json:"model"`
		Tools     []string `json:"tools"`
	}
	StepStartEvent struct {
		Type    string `json:"type"`
		Step    int    `json:"step"`
		Attempt int    `json:"attempt"`
	}
	TextEvent struct {
		Type string `json:"type"`
		Step int    `json:"step"`
		Text string `json:"text"`
	}
	ToolCallEvent struct {
		Type      string `json:"type"`
		Step      int    `json:"step"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Duplicate bool   `json:"duplicate"`
		Truncated bool   `json:"truncated,omitempty"`
	}
	ToolResultEvent struct {
		Type       string `json:"type"`
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
		Reminder   string `json:"reminder,omitempty"`
	}
	CompactionEvent struct {
		Type       string `json:"type"`
		Tokens     int64  `json:"tokens"`
		Summarised int    `json:"summarised"`
		Kept       int    `json:"kept"`
		Error      string `json:"error,omitempty"`
	}
	ToolProgressEvent struct {
		Type     string  `json:"type"`
		ID       string  `json:"id"`
		Name     string  `json:"name"`
		Progress float64 `json:"progress"`
		Total    float64 `json:"total,omitempty"`
		Message  string  `json:"message,omitempty"`
	}
	ApprovalEvent struct {
		Type        string `json:"type"`
		ToolCallID  string `json:"tool_call_id"`
		Tool        string `json:"tool"`
		Action      string `json:"action"`
		Description string `json:"description"`
		Approved    bool   `json:"approved"`
		Feedback    string `json:"feedback,omitempty"`
		Answer      string `json:"answer"`
		ForSession  bool   `json:"for_session"`
	}
	UsageEvent struct {
		Type string `json:"type"`
		Step int    `json:"step"`
		providers.Usage
	}
	RetryEvent struct {
		Type        string    `json:"type"`
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
	StopEvent struct {
		Type           string    `json:"type"`
		Step           int       `json:"step"`
		StopReason     string    `json:"stop_reason"`
		TruncatedCalls []CallRef `json:"truncated_calls,omitempty"`
	}
	InterruptedEvent struct {
		Type  string    `json:"type"`
		Step  int       `json:"step"`
		Calls []CallRef `json:"calls"`
	}
	ErrorEvent struct {
		Type      string `json:"type"`
		Error     string `json:"error"`
		Retryable bool   `json:"retryable"`
	}
	TurnEndEvent struct {
		Type       string          `json:"type"`
		Steps      int             `json:"steps"`
		Reason     string          `json:"reason"`
		Usage      providers.Usage `json:"usage"`
		StopReason string          `json:"stop_reason,omitempty"`
		Error      string          `json:"error,omitempty"`
	}
)

var statusOf = map[toolset.Kind]string{toolset.Ok: "ok", toolset.Failed: "error", toolset.Rejected: "rejected"}

// JSONEvent is the stream-json form of a loop event (nil for none).
func JSONEvent(e loop.Event) any {
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
		return ApprovalEvent{Type: "approval", ToolCallID: e.ToolCallID, Tool: e.ToolName, Action: e.Action,
			Description: e.Description, Approved: e.Approved, Feedback: e.Feedback, Answer: e.Answer, ForSession: e.ForSession}
	case loop.UsageReported:
		return UsageEvent{Type: "usage", Step: e.Step, Usage: e.Usage}
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
		ev := TurnEndEvent{Type: "turn_end", Steps: e.Steps, Reason: string(e.Reason), Usage: e.Usage, StopReason: string(e.ModelStop)}
		if e.Err != nil {
			ev.Error = e.Err.Error()
		}
		return ev
	}
	return guardJSONEvent(e)
}

func callRefs(calls []providers.ToolCall) []CallRef {
	refs := make([]CallRef, len(calls))
	for i, c := range calls {
		refs[i] = CallRef{ID: c.ID, Name: c.Name}
	}
	return refs
}

// progressText is "3/10 message", "3 message" when the total is unknown.
func progressText(e loop.ToolProgress) string {
	text := strconv.FormatFloat(e.Progress, 'f', -1, 64)
	if e.Total > 0 {
		text += "/" + strconv.FormatFloat(e.Total, 'f', -1, 64)
	}
	if e.Message != "" {
		text += " " + e.Message
	}
	return text
}
