package repl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

const bound = 10 * time.Second

// recordingProvider records the requests it is sent.
type recordingProvider struct {
	providers.ChatProvider
	mu       sync.Mutex
	requests []providers.Request
}

func (p *recordingProvider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	p.mu.Lock()
	req.History = append([]providers.Message(nil), req.History...)
	p.requests = append(p.requests, req)
	p.mu.Unlock()
	return p.ChatProvider.Stream(ctx, req)
}

func (p *recordingProvider) Requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.requests...)
}

// askTool asks approval for "run command" and echoes its arguments when
// approved, as a plugin tool using the Approval capability would.
type askTool struct {
	decider approval.Decider
	runs    int
	mu      sync.Mutex
}

func (t *askTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Run", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}
}

func (t *askTool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	var a struct{ Command string }
	_ = json.Unmarshal(args, &a)
	d, err := t.decider.Decide(ctx, approval.Request{ToolCallID: id, ToolName: "Run", Action: "run command", Description: a.Command})
	if err != nil {
		return toolset.RuntimeError(err)
	}
	if !d.Approved {
		return toolset.RejectedResult(d.Feedback)
	}
	t.mu.Lock()
	t.runs++
	t.mu.Unlock()
	return toolset.Result{Output: []providers.ContentPart{providers.TextPart("ran " + a.Command)}, Brief: "ran " + a.Command}
}

func call(id, command string) providers.ToolCall {
	return providers.ToolCall{ID: id, Name: "Run", Arguments: `{"command":"` + command + `"}`}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	out, errOut *syncBuffer
	prov        *recordingProvider
	tool        *askTool
	loop        *loop.Loop
	// turns counts the turns; saved is the history the conversation saved.
	turns int
	saved []providers.Message
}

// runREPL drives a REPL through a pipe: input is written to the pipe as
// the user would type it, prompts and approval answers alike.
func runREPL(t *testing.T, turns []scripted.Turn, input string, jsonOut bool) *harness {
	t.Helper()
	h := &harness{out: &syncBuffer{}, errOut: &syncBuffer{}, prov: &recordingProvider{ChatProvider: scripted.New(turns)}}
	var printer Printer = NewTextPrinter(h.out, h.errOut, TextOptions{})
	prompts := io.Writer(h.out)
	if jsonOut {
		printer, prompts = NewJSONPrinter(h.out), h.errOut
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, input)
		pw.Close()
	}()
	r := New(Config{Lines: NewPipeReader(pr), Printer: printer, Prompts: prompts})
	h.tool = &askTool{decider: approval.NewFlow(approval.ModeAsk, r.Asker(), conversation.ReportTo(printer))}
	ts := toolset.New(nil)
	if err := ts.Add(h.tool); err != nil {
		t.Fatal(err)
	}
	obs := loop.ObserverFunc(func(e loop.Event) {
		if _, ok := e.(loop.TurnEnded); ok {
			h.turns++
		}
		printer.Observe(e)
	})
	l, err := loop.New(loop.Config{Provider: h.prov, Toolset: ts, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	h.loop = l
	sess := newSession(t)
	printer.Start(Info{SessionID: "s1", Agent: "test", Provider: "scripted", Model: h.prov.Model(), Tools: []string{"Run"}})

	done := make(chan error, 1)
	go func() {
		done <- r.Run(context.Background(), conversation.New(conversation.Parts{Session: sess, Loop: l, Toolset: ts}))
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(bound):
		t.Fatalf("the REPL did not finish; output so far:\n%s", h.out)
	}
	h.saved = savedHistory(t, sess)
	return h
}

func newSession(t *testing.T) *session.Session {
	t.Helper()
	sess, err := session.New(session.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// savedHistory is the history saved in sess (none when nothing was).
func savedHistory(t *testing.T, sess *session.Session) []providers.Message {
	t.Helper()
	if _, err := os.Stat(sess.HistoryPath()); os.IsNotExist(err) {
		return nil
	}
	h, err := session.LoadHistory(sess.HistoryPath())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestREPLOneTurn(t *testing.T) {
	h := runREPL(t, []scripted.Turn{{Text: "Hello there.", Usage: &providers.Usage{InputTokens: 1200, OutputTokens: 34}}}, "hi\nexit\n", false)
	out := h.out.String()
	for _, want := range []string{"agent test", "Hello there.\n", "[1 step · 1.2k tokens · turn: 1,200 in, 34 out]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if h.turns != 1 || len(h.saved) != 2 {
		t.Fatalf("%d turns, saved %+v", h.turns, h.saved)
	}
	if h.errOut.String() != "" {
		t.Fatalf("stderr %q", h.errOut)
	}
}

func TestREPLEndsOnEOFAndSkipsBlankLines(t *testing.T) {
	h := runREPL(t, []scripted.Turn{{Text: "one"}, {Text: "two"}}, "\n  \nfirst\r\nsecond", false)
	if out := h.out.String(); !strings.Contains(out, "one\n") || !strings.Contains(out, "two\n") {
		t.Fatalf("output:\n%s", out)
	}
	if h.turns != 2 || len(h.saved) != 4 {
		t.Fatalf("%d turns, saved %d messages", h.turns, len(h.saved))
	}
}

func TestREPLApproveForSession(t *testing.T) {
	turns := []scripted.Turn{
		{Text: "Listing.", ToolCalls: []providers.ToolCall{call("c1", "ls")}},
		{ToolCalls: []providers.ToolCall{call("c2", "pwd")}},
		{Text: "Done."},
	}
	// An unknown answer is asked again; "2" approves for the session.
	h := runREPL(t, turns, "run things\nmaybe\n2\nexit\n", false)
	out := h.out.String()
	if n := strings.Count(out, "? Run wants approval to run command\n  ls\n"); n != 1 {
		t.Fatalf("asked %d times, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "please answer 1, 2, 3 or 4") {
		t.Errorf("the unknown answer was not asked again:\n%s", out)
	}
	if h.tool.runs != 2 {
		t.Fatalf("the tool ran %d times", h.tool.runs)
	}
	for _, want := range []string{
		"• Run  ls\n", "✓ Run: ran ls", "Run: run command approved for this session (after ",
		"Run: run command (approved for this session)", "✓ Run: ran pwd", "Done.", "[3 steps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestREPLRejectWithFeedback(t *testing.T) {
	for _, answer := range []string{"4\nuse rg instead\n", "4 use rg instead\n", "f: use rg instead\n"} {
		t.Run(strings.ReplaceAll(answer, "\n", "|"), func(t *testing.T) {
			turns := []scripted.Turn{
				{ToolCalls: []providers.ToolCall{call("c1", "grep -r x")}},
				{Text: "OK, using rg."},
			}
			h := runREPL(t, turns, "search\n"+answer+"exit\n", false)
			reqs := h.prov.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			var seen string
			for _, m := range reqs[1].History {
				if m.Role == providers.RoleTool && m.ToolCallID == "c1" {
					seen = m.Text()
				}
			}
			if !strings.Contains(seen, "The tool call is rejected by the user. User feedback: use rg instead") {
				t.Fatalf("the model saw %q", seen)
			}
			out := h.out.String()
			if !strings.Contains(out, "✗ Run: Rejected: use rg instead") || !strings.Contains(out, "OK, using rg.") {
				t.Fatalf("output:\n%s", out)
			}
			if h.tool.runs != 0 {
				t.Fatal("the rejected tool ran")
			}
		})
	}
}

func TestREPLPlainRejectionEndsTurn(t *testing.T) {
	turns := []scripted.Turn{
		{ToolCalls: []providers.ToolCall{call("c1", "rm -rf /")}},
		{Text: "after the user's next message"},
	}
	h := runREPL(t, turns, "clean\n3\nnever mind\nexit\n", false)
	out := h.out.String()
	if !strings.Contains(out, "✗ Run: Rejected by user") || !strings.Contains(out, "[1 step]") {
		t.Fatalf("output:\n%s", out)
	}
	// The next prompt starts a new turn that gets the second response.
	if !strings.Contains(out, "after the user's next message") || h.turns != 2 {
		t.Fatalf("output:\n%s", out)
	}
}

func TestREPLEndOfInputAtApprovalRejects(t *testing.T) {
	turns := []scripted.Turn{{ToolCalls: []providers.ToolCall{call("c1", "ls")}}, {Text: "never"}}
	h := runREPL(t, turns, "go\n", false)
	if out := h.out.String(); !strings.Contains(out, "(end of input: rejected)") || !strings.Contains(out, "Rejected by user") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestStreamJSON parses the stream-json output back, event by event.
func TestStreamJSON(t *testing.T) {
	turns := []scripted.Turn{
		{Reasoning: "Need a listing.", Text: "Looking.", ToolCalls: []providers.ToolCall{call("c1", "ls")},
			Usage: &providers.Usage{InputTokens: 10, OutputTokens: 5}},
		{Text: "Done.", Usage: &providers.Usage{InputTokens: 20, OutputTokens: 2}},
	}
	h := runREPL(t, turns, "list\n1\nexit\n", true)
	if !strings.Contains(h.errOut.String(), "? Run wants approval to run command\n  ls\n") {
		t.Fatalf("the approval question is not on stderr: %q", h.errOut)
	}

	var events []map[string]any
	sc := bufio.NewScanner(strings.NewReader(h.out.String()))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	// Text and reasoning arrive in deltas (the scripted provider streams
	// word by word): fold consecutive deltas of a kind.
	var folded []map[string]any
	for _, ev := range events {
		if n := len(folded); n > 0 && (ev["type"] == "text" || ev["type"] == "reasoning") && folded[n-1]["type"] == ev["type"] {
			folded[n-1]["text"] = folded[n-1]["text"].(string) + ev["text"].(string)
			continue
		}
		folded = append(folded, ev)
	}
	want := []map[string]any{
		{"type": "session", "session_id": "s1", "agent": "test", "provider": "scripted", "tools": []any{"Run"}},
		{"type": "step_start", "step": 1.0, "attempt": 1.0},
		{"type": "reasoning", "step": 1.0, "text": "Need a listing."},
		{"type": "text", "step": 1.0, "text": "Looking."},
		{"type": "tool_call", "step": 1.0, "id": "c1", "name": "Run", "arguments": `{"command":"ls"}`, "duplicate": false},
		{"type": "approval", "tool_call_id": "c1", "tool": "Run", "action": "run command", "description": "ls", "approved": true, "answer": "user", "for_session": false},
		{"type": "tool_result", "step": 1.0, "id": "c1", "name": "Run", "status": "ok", "is_error": false, "brief": "ran ls", "output": "ran ls", "repeat": 1.0},
		{"type": "usage", "step": 1.0, "input_tokens": 10.0, "output_tokens": 5.0},
		{"type": "stop", "step": 1.0, "stop_reason": "tool_use"},
		{"type": "step_start", "step": 2.0, "attempt": 1.0},
		{"type": "text", "step": 2.0, "text": "Done."},
		{"type": "usage", "step": 2.0, "input_tokens": 20.0, "output_tokens": 2.0},
		{"type": "stop", "step": 2.0, "stop_reason": "end_turn"},
		{"type": "turn_end", "steps": 2.0, "reason": "done", "usage": map[string]any{"input_tokens": 30.0, "output_tokens": 7.0}},
	}
	// The usage and stop events may come before or after the approval and
	// the tool result (the tool runs while the stream goes on): move them to
	// the step's end to compare in a canonical order.
	var ordered, usages []map[string]any
	for _, ev := range folded {
		switch ev["type"] {
		case "usage", "stop":
			usages = append(usages, ev)
			continue
		case "step_start", "turn_end":
			ordered, usages = append(ordered, usages...), nil
		}
		ordered = append(ordered, ev)
	}
	folded = append(ordered, usages...)
	if len(folded) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(folded), len(want), h.out)
	}
	for i, w := range want {
		for k, v := range w {
			got, _ := json.Marshal(folded[i][k])
			exp, _ := json.Marshal(v)
			if !bytes.Equal(got, exp) {
				t.Errorf("event %d (%s): %s = %s, want %s", i, w["type"], k, got, exp)
			}
		}
	}
	if _, ok := folded[6]["duration_ms"].(float64); !ok {
		t.Errorf("tool_result lacks duration_ms: %v", folded[6])
	}
}

func TestTextPrinterUnattended(t *testing.T) {
	var out bytes.Buffer
	p := NewTextPrinter(&out, io.Discard, TextOptions{})
	p.Observe(loop.ApprovalDecided{ToolName: "Shell", Action: "run command", Feedback: approval.UnattendedFeedback, Answer: approval.AnswerUnattended})
	if !strings.Contains(out.String(), "Shell: run command rejected: no one to ask for approval; run with --yolo to allow it") {
		t.Fatalf("%q", out.String())
	}
}

func TestApprovalQuestionShowsDiff(t *testing.T) {
	var out bytes.Buffer
	a := &asker{lines: NewPipeReader(strings.NewReader("1\n")), out: &out}
	data, _ := json.Marshal(map[string]string{"path": "a.go", "old_text": "one\ntwo\nthree\nfour\n", "new_text": "one\n2\nthree\nfour\nfive\n"})
	ans, _, err := a.ask(context.Background(), approval.Request{ToolName: "StrReplaceFile", Action: "edit file",
		Description: "Edit file `a.go`", Display: []approval.Display{{Kind: "diff", Data: data}}})
	if err != nil || ans != approval.Approve {
		t.Fatalf("%v %v", ans, err)
	}
	want := "\n? StrReplaceFile wants approval to edit file\n  Edit file `a.go`\n    a.go\n" +
		"    1   one\n    2 - two\n    2 + 2\n    3   three\n    4   four\n    5 + five\n" +
		"  1) approve once  2) approve for this session  3) reject  4) reject with feedback\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestApprovalQuestionShowsHunks: a large edit's diff comes as hunks, each
// numbered from its old_start and new_start, and a note of what is left out.
func TestApprovalQuestionShowsHunks(t *testing.T) {
	var out bytes.Buffer
	a := &asker{lines: NewPipeReader(strings.NewReader("1\n")), out: &out}
	first, _ := json.Marshal(map[string]any{"path": "a.go", "old_text": "l9\nl10\nl11\n", "new_text": "l9\nten\nl11\n",
		"old_start": 9, "new_start": 9})
	second, _ := json.Marshal(map[string]any{"path": "a.go", "old_text": "l500\nl501\n", "new_text": "l500\nadded\nl501\n",
		"old_start": 500, "new_start": 500, "note": "⋯ 9,995 unchanged lines not shown ⋯"})
	if _, _, err := a.ask(context.Background(), approval.Request{ToolName: "StrReplaceFile", Action: "edit file",
		Description: "Edit file `a.go`", Display: []approval.Display{{Kind: "diff", Data: first}, {Kind: "diff", Data: second}}}); err != nil {
		t.Fatal(err)
	}
	want := "\n? StrReplaceFile wants approval to edit file\n  Edit file `a.go`\n    a.go\n" +
		"     9   l9\n    10 - l10\n    10 + ten\n    11   l11\n    …\n" +
		"    500   l500\n    501 + added\n    502   l501\n    ⋯ 9,995 unchanged lines not shown ⋯\n" +
		"  1) approve once  2) approve for this session  3) reject  4) reject with feedback\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestApprovalQuestionNamesPlugin: a plugin's request is shown with the
// tool and plugin the host names, its own description marked as the
// plugin's words.
func TestApprovalQuestionNamesPlugin(t *testing.T) {
	var out bytes.Buffer
	a := &asker{lines: NewPipeReader(strings.NewReader("3\n")), out: &out}
	ans, _, err := a.ask(context.Background(), approval.Request{Plugin: "hostile", ToolName: "Sneaky", Action: "run command",
		Description: "Shell: Run command `ls`"})
	if err != nil || ans != approval.Reject {
		t.Fatalf("%v %v", ans, err)
	}
	want := "\n? Sneaky wants approval to run command (plugin hostile)\n  plugin hostile says:\n  Shell: Run command `ls`\n" +
		"  1) approve once  2) approve for this session  3) reject  4) reject with feedback\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// blockTool reports its start and runs until its ctx ends.
type blockTool struct{ started chan struct{} }

func (b *blockTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Block", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (b *blockTool) Call(ctx context.Context, _ string, _ json.RawMessage) toolset.Result {
	close(b.started)
	<-ctx.Done()
	return toolset.RuntimeError(ctx.Err())
}

func TestREPLInterrupts(t *testing.T) {
	out := &syncBuffer{}
	printer := NewTextPrinter(out, io.Discard, TextOptions{})
	pr, pw := io.Pipe()
	interrupts := make(chan os.Signal, 1)
	prompts := make(chan struct{}, 4)
	lines := &notifyingReader{LineReader: NewPipeReader(pr), reads: prompts}
	r := New(Config{Lines: lines, Printer: printer, Prompts: out, Interrupts: interrupts})
	tool := &blockTool{started: make(chan struct{})}
	ts := toolset.New(nil)
	if err := ts.Add(tool); err != nil {
		t.Fatal(err)
	}
	prov := scripted.New([]scripted.Turn{
		{Text: "Blocking.", ToolCalls: []providers.ToolCall{{ID: "b1", Name: "Block", Arguments: "{}"}}},
		{Text: "Second turn."},
	})
	turnEnds := make(chan loop.TurnEnded, 2)
	obs := loop.ObserverFunc(func(e loop.Event) {
		printer.Observe(e)
		if te, ok := e.(loop.TurnEnded); ok {
			turnEnds <- te
		}
	})
	l, err := loop.New(loop.Config{Provider: prov, Toolset: ts, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- r.Run(context.Background(), conversation.New(conversation.Parts{Loop: l, Toolset: ts}))
	}()

	// Ctrl-C during a turn cancels the turn, not the REPL.
	io.WriteString(pw, "block\n")
	select {
	case <-tool.started:
	case <-time.After(bound):
		t.Fatal("the tool did not start")
	}
	interrupts <- os.Interrupt
	io.WriteString(pw, "next\n")
	for _, want := range []loop.StopReason{loop.StopCancelled, loop.StopDone} {
		select {
		case te := <-turnEnds:
			if te.Reason != want {
				t.Fatalf("turn ended %+v, want %s", te, want)
			}
		case <-time.After(bound):
			t.Fatalf("no turn end:\n%s", out)
		}
	}
	// Ctrl-C at the (third) prompt says how to leave; a second one
	// leaves.
	for range 3 {
		select {
		case <-prompts:
		case <-time.After(bound):
			t.Fatalf("no prompt:\n%s", out)
		}
	}
	interrupts <- os.Interrupt
	select {
	case <-prompts:
	case <-time.After(bound):
		t.Fatalf("no prompt after Ctrl-C:\n%s", out)
	}
	if !strings.Contains(out.String(), "press Ctrl-C again or Ctrl-D to exit") {
		t.Fatalf("Ctrl-C at the prompt does not say how to leave:\n%s", out)
	}
	interrupts <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(bound):
		t.Fatalf("Ctrl-C at the prompt did not leave:\n%s", out)
	}
	got := out.String()
	for _, want := range []string{"✗ Block: cancelled", "Interrupted.", "[0 steps]", "Second turn.\n[1 step]"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The cancelled step stays, its call answered as interrupted, then the
	// note, then the second turn: user, assistant, tool, user, user, assistant.
	if h := l.History(); len(h) != 6 || h[2].Role != providers.RoleTool || !strings.Contains(h[2].Text(), "interrupted by the user") ||
		h[3].Text() != loop.InterruptedNote || h[4].Text() != "next" {
		t.Fatalf("history %+v", h)
	}
}

// notifyingReader reports each ReadLine call.
type notifyingReader struct {
	LineReader
	reads chan<- struct{}
}

func (n *notifyingReader) ReadLine(ctx context.Context, prompt string) (string, error) {
	n.reads <- struct{}{}
	return n.LineReader.ReadLine(ctx, prompt)
}

func TestProgressText(t *testing.T) {
	tests := []struct {
		e    loop.ToolProgress
		want string
	}{
		{loop.ToolProgress{Progress: 3, Total: 10, Message: "indexing"}, "3/10 indexing"},
		{loop.ToolProgress{Progress: 0.5}, "0.5"},
	}
	for _, tt := range tests {
		if got := progressText(tt.e); got != tt.want {
			t.Errorf("progressText(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestMarkdownBlocks(t *testing.T) {
	m := newMarkdown(80)
	if got := m.write("# Title\n\nSome **bo"); !strings.Contains(got, "Title") || strings.Contains(got, "Some") {
		t.Fatalf("first block %q", got)
	}
	if got := m.write("ld** text.\n```go\nx := 1\n\ny := 2\n"); got != "" {
		t.Fatalf("rendered inside an open code fence: %q", got)
	}
	rest := m.write("```\n\n") + m.flush()
	for _, want := range []string{"bold", "x", "y"} {
		if !strings.Contains(rest, want) {
			t.Errorf("rest lacks %q: %q", want, rest)
		}
	}
	if strings.Contains(rest, "**") || strings.Contains(rest, "```") {
		t.Errorf("not rendered: %q", rest)
	}
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasSuffix(strings.TrimSuffix(l, ansiReset), " ") {
			t.Errorf("padded line %q", l)
		}
	}
}

func TestCallSummary(t *testing.T) {
	for _, c := range []struct{ tool, args, want string }{
		{"Shell", `{"command":"ls -la"}`, "ls -la"},
		{"ReadFile", `{"path":"README.md","line_offset":1,"n_lines":40}`, "README.md:1-40"},
		{"ReadFile", `{"path":"README.md"}`, "README.md"},
		{"Grep", `{"pattern":"TODO","path":"src"}`, "TODO  src"},
		{"Custom", `{"url":"https://x.test"}`, "https://x.test"},
		{"Custom", `{"n":3}`, `{"n":3}`},
		{"Custom", `{}`, ""},
		{"Custom", `not json`, "not json"},
	} {
		if got := callSummary(c.tool, c.args); got != c.want {
			t.Errorf("callSummary(%s, %s) = %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

func TestKeyParser(t *testing.T) {
	for _, c := range []struct {
		name    string
		reads   []string
		key     rune
		dropped bool
	}{
		{"a key", []string{"1"}, '1', false},
		{"several at once", []string{"12"}, 0, true},
		{"a paste", []string{"\x1b[200~1 yes\x1b[201~"}, 0, true},
		{"a paste split over reads", []string{"\x1b[20", "0~1\r2", "\x1b[2", "01~"}, 0, true},
		{"a key after a paste", []string{"\x1b[200~abc\x1b[201~", "3"}, '3', true},
		{"an arrow", []string{"\x1b[A"}, 0, false},
		{"escape", []string{"\x1b"}, 0x1b, false},
	} {
		var p keyParser
		var key rune
		dropped := false
		for _, r := range c.reads {
			k, ok, d := p.feed([]byte(r))
			dropped = dropped || d
			if ok {
				key = k
			}
		}
		if key != c.key || dropped != c.dropped {
			t.Errorf("%s: key %q dropped %v, want %q %v", c.name, key, dropped, c.key, c.dropped)
		}
	}
}

func TestLineDiffContext(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\n"
	new := "a\nB\nc\nd\ne\nf\ng\nH\n"
	var got []string
	for _, l := range renderDiff(lineDiff(old, new), func(_, s string) string { return s }) {
		got = append(got, l)
	}
	want := []string{"1   a", "2 - b", "2 + B", "3   c", "4   d", "…", "6   f", "7   g", "8 - h", "8 + H"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestCompactTokens(t *testing.T) {
	for n, want := range map[int64]string{950: "950", 12400: "12.4k", 128000: "128k", 1_500_000: "1.5M"} {
		if got := compactTokens(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

func TestTextPrinterContextUse(t *testing.T) {
	var out bytes.Buffer
	p := NewTextPrinter(&out, &out, TextOptions{})
	p.Start(Info{Agent: "a", Provider: "p", Model: "m", WorkDir: "/w", Approval: "ask", MaxContextSize: 128000})
	p.Observe(loop.UsageReported{Step: 1, Usage: providers.Usage{InputTokens: 12000, OutputTokens: 400}})
	p.Observe(loop.TurnEnded{Steps: 1, Usage: providers.Usage{InputTokens: 12000, OutputTokens: 400}, Reason: loop.StopDone})
	for _, want := range []string{"agent a", "model p/m", "work dir  /w", "approval  ask", "/help for commands",
		"[1 step · 12.4k tokens · 9% of 128k · turn: 12,000 in, 400 out]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestTextPrinterApprovalTimeApart(t *testing.T) {
	var out bytes.Buffer
	p := NewTextPrinter(&out, &out, TextOptions{})
	c := call("c1", "ls")
	p.Observe(loop.ToolCallStarted{Step: 1, Call: c})
	p.Observe(loop.ApprovalDecided{ToolCallID: "c1", ToolName: "Run", Action: "run command", Approved: true, Answer: approval.AnswerUser, Waited: 4 * time.Second})
	p.Observe(loop.ToolCallFinished{Step: 1, Call: c, Duration: 4*time.Second + 300*time.Millisecond,
		Result: toolset.Result{Output: []providers.ContentPart{providers.TextPart("1\n2\n3\n4\n5\n6\n")}}})
	for _, want := range []string{"• Run  ls\n", "Run: run command approved (after 4.0s)", "(300ms, approval 4.0s)",
		"│ … 2 more lines (/last or Ctrl-O to see all)", "│ 6\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if h, o := p.LastOutput(); h != "Run  ls" || o != "1\n2\n3\n4\n5\n6\n" {
		t.Errorf("LastOutput %q %q", h, o)
	}
}

// TestTextPrinterShowLastOutputDuringTurn: Ctrl-O while a turn runs
// prints the whole output of the last call above the live area, and the
// live area (status, input line) is drawn again below it.
func TestTextPrinterShowLastOutputDuringTurn(t *testing.T) {
	var out bytes.Buffer
	p := NewTextPrinter(&out, &out, TextOptions{TTY: true})
	p.ShowLastOutput()
	if !strings.Contains(out.String(), "no tool call yet") {
		t.Errorf("Ctrl-O before any call: %q", out.String())
	}
	c := call("c1", "ls")
	p.Observe(loop.StepStarted{Step: 1})
	p.Observe(loop.ToolCallStarted{Step: 1, Call: c})
	p.Observe(loop.ToolCallFinished{Step: 1, Call: c, Duration: time.Second,
		Result: toolset.Result{Output: []providers.ContentPart{providers.TextPart("1\n2\n3\n4\n5\n6")}}})
	p.Observe(loop.StepStarted{Step: 2})
	p.ShowInput(nil, "typed")
	out.Reset()
	p.ShowLastOutput()
	got := ansiCodes.ReplaceAllString(out.String(), "")
	i, j := strings.Index(got, "Run  ls\n1\n2\n3\n4\n5\n6\n"), strings.LastIndex(got, "> typed")
	if i < 0 || j < i {
		t.Errorf("Ctrl-O during a turn printed %q; want the whole output, then the input line", got)
	}
}

// TestREPLSlashCommands: commands run locally; /compact asks the model for
// a summary with the instruction; /clear swaps the loop and the saver;
// /yolo switches the decider.
func TestREPLSlashCommands(t *testing.T) {
	prov := &recordingProvider{ChatProvider: scripted.New([]scripted.Turn{
		{Text: "one"}, {Text: "two"}, {Text: "The summary."}, {Text: "after clear"},
	})}
	out := &syncBuffer{}
	printer := NewTextPrinter(out, out, TextOptions{})
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, "/nope\nfirst\nsecond\n/compact keep the names\n/yolo\n/clear\nthird\n/exit\nnot read\n")
		pw.Close()
	}()
	ts := toolset.New(nil)
	newLoop := func() *loop.Loop {
		l, err := loop.New(loop.Config{Provider: prov, Toolset: ts, Observer: printer})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	oldSess, newSess := newSession(t), newSession(t)
	r := New(Config{Lines: NewPipeReader(pr), Printer: printer, Prompts: out})
	flow := approval.NewFlow(approval.ModeAsk, r.Asker(), conversation.ReportTo(printer))
	r.SetApprovals(flow)
	conv := conversation.New(conversation.Parts{Session: oldSess, Loop: newLoop(), Toolset: ts, Approvals: flow,
		Clear: func() (*session.Session, *loop.Loop, error) { return newSess, newLoop(), nil }})
	if err := r.Run(context.Background(), conv); err != nil {
		t.Fatal(err)
	}
	reqs := prov.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (first, second, the summary, third):\n%s", len(reqs), out)
	}
	ask := reqs[2].History[len(reqs[2].History)-1].Text()
	if !strings.Contains(ask, "Summarise the conversation") || !strings.Contains(ask, "The user asks: keep the names") {
		t.Errorf("compaction request %q", ask)
	}
	if n := len(reqs[3].History); n != 1 || reqs[3].History[0].Text() != "third" {
		t.Errorf("after /clear the model got %d messages: %+v", n, reqs[3].History)
	}
	for _, want := range []string{"Unknown command /nope.", "History compacted", "yolo on", "New session " + newSess.ID + "; the previous one is kept (run --resume " + oldSess.ID + ")."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if flow.Mode() != approval.ModeYolo {
		t.Error("/yolo did not switch the approval flow")
	}
	// The old session holds the compacted history, the new one the turn
	// after /clear.
	if old := savedHistory(t, oldSess); len(old) == 0 || !strings.Contains(old[0].Text(), "The summary.") {
		t.Errorf("the old session saved %+v, want the compacted history", old)
	}
	if got := savedHistory(t, newSess); len(got) != 2 || got[0].Text() != "third" {
		t.Errorf("the new session saved %+v, want the turn after /clear", got)
	}
}

func TestIsCommand(t *testing.T) {
	for line, want := range map[string]bool{"/help": true, "/model k2": true, "/etc/hosts is wrong": false,
		"/": false, "hello": false, "/help\nmore": false} {
		if got := isCommand(line); got != want {
			t.Errorf("isCommand(%q) = %v", line, got)
		}
	}
	if got := CompleteCommand("/co"); len(got) != 1 || got[0] != "/compact" {
		t.Errorf("CompleteCommand(/co) = %q", got)
	}
}

// TestSpinnerClearsItsLine: every frame clears the line first, so a
// shorter frame ("1.0s" after "999ms") leaves no stray characters.
func TestSpinnerClearsItsLine(t *testing.T) {
	out := &syncBuffer{}
	start := time.Now()
	var mu sync.Mutex
	calls := 0
	now := func() time.Time { // 999ms, then 1.0s
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			return start.Add(time.Duration(calls-1) * 999 * time.Millisecond)
		}
		return start.Add(time.Second)
	}
	p := NewTextPrinter(out, out, TextOptions{TTY: true, Now: now})
	p.Observe(loop.StepStarted{Step: 1, Attempt: 1})
	deadline := time.Now().Add(bound)
	for strings.Count(out.String(), "thinking") < 2 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	p.Pause()
	frames := strings.Split(out.String(), "\r")[1:]
	if len(frames) < 2 {
		t.Fatalf("frames %q", out.String())
	}
	for _, f := range frames {
		if !strings.HasPrefix(f, "\033[K") {
			t.Errorf("a frame does not clear its line: %q", f)
		}
	}
}

// TestREPLReload: /reload is listed by /help and runs the reload, never
// reaching the model.
func TestREPLReload(t *testing.T) {
	prov := &recordingProvider{ChatProvider: scripted.New([]scripted.Turn{{Text: "unused"}})}
	out := &syncBuffer{}
	printer := NewTextPrinter(out, out, TextOptions{})
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, "/help\n/reload\n/exit\n")
		pw.Close()
	}()
	reloads := 0
	r := New(Config{Lines: NewPipeReader(pr), Printer: printer, Prompts: out,
		Reload: func(context.Context) { reloads++ }})
	l, err := loop.New(loop.Config{Provider: prov, Toolset: toolset.New(nil), Observer: printer})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), conversation.New(conversation.Parts{Loop: l})); err != nil {
		t.Fatal(err)
	}
	if reloads != 1 || len(prov.Requests()) != 0 {
		t.Fatalf("%d reloads and %d model requests, want 1 and 0", reloads, len(prov.Requests()))
	}
	if !strings.Contains(out.String(), "/reload") {
		t.Errorf("/help does not list /reload:\n%s", out)
	}
}
