package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
)

// Who decided an approval (loop.ApprovalDecided.Answer).
const (
	AnswerYolo       = "yolo"
	AnswerUnattended = "unattended"
	AnswerUser       = "user"
	AnswerSession    = "session"
)

// ApprovalMode says how a run answers approval requests.
type ApprovalMode int

// The approval modes.
const (
	// Ask asks the user (approval.Session: approvals for the session are
	// remembered).
	Ask ApprovalMode = iota
	// Yolo approves everything (--yolo).
	Yolo
	// Unattended rejects everything with approval.UnattendedFeedback, which
	// tells the model (and the user) that --yolo allows it: one-shot runs
	// (-p, or the prompt on stdin) without --yolo.
	Unattended
)

// String names the mode, for the banner.
func (m ApprovalMode) String() string {
	switch m {
	case Yolo:
		return "yolo (every action approved)"
	case Unattended:
		return "unattended (actions that need approval are rejected; --yolo allows them)"
	}
	return "ask"
}

// Decider is the approval decider of a run: its mode's decisions, every one
// reported to the observer as a loop.ApprovalDecided event. In Ask mode
// yolo can be switched on and off (/yolo).
type Decider struct {
	mode  ApprovalMode
	base  *observed
	yolo  *observed
	onOff atomic.Bool
}

// NewDecider returns the decider of a run; every decision is reported to
// obs as a loop.ApprovalDecided event. ask is used in Ask mode only.
func NewDecider(mode ApprovalMode, ask approval.Asker, obs loop.Observer) *Decider {
	d := &Decider{mode: mode, yolo: &observed{d: approval.Yolo{}, obs: obs, answer: AnswerYolo}}
	switch mode {
	case Yolo:
		d.base = d.yolo
	case Unattended:
		d.base = &observed{d: approval.Deny{Feedback: approval.UnattendedFeedback}, obs: obs, answer: AnswerUnattended}
	default:
		d.base = &observed{d: approval.NewSession(ask), obs: obs, answer: AnswerSession}
	}
	return d
}

// Decide implements approval.Decider.
func (d *Decider) Decide(ctx context.Context, req approval.Request) (approval.Decision, error) {
	if d.onOff.Load() {
		return d.yolo.Decide(ctx, req)
	}
	return d.base.Decide(ctx, req)
}

// SetYolo switches approving everything on or off (Ask mode only; in the
// other modes it does nothing).
func (d *Decider) SetYolo(on bool) {
	if d.mode == Ask {
		d.onOff.Store(on)
	}
}

// Mode is the current approval mode.
func (d *Decider) Mode() ApprovalMode {
	if d.onOff.Load() {
		return Yolo
	}
	return d.mode
}

// observed reports the decisions of d.
type observed struct {
	d      approval.Decider
	obs    loop.Observer
	answer string
}

type askedKey struct{}

// askRecord is the user's answer to one request, if they were asked.
type askRecord struct {
	mu     sync.Mutex
	asked  bool
	answer approval.Answer
	waited time.Duration
}

func (r *askRecord) set(a approval.Answer, waited time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked, r.answer, r.waited = true, a, waited
}

func (r *askRecord) get() (approval.Answer, time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answer, r.waited, r.asked
}

func (o *observed) Decide(ctx context.Context, req approval.Request) (approval.Decision, error) {
	// The asker records the user's answer, which tells a decision of the
	// user from one remembered for the session.
	asked := &askRecord{}
	d, err := o.d.Decide(context.WithValue(ctx, askedKey{}, asked), req)
	if err != nil {
		return d, err
	}
	answer, forSession, waited := o.answer, false, time.Duration(0)
	if a, w, ok := asked.get(); ok {
		answer, forSession, waited = AnswerUser, a == approval.ApproveForSession, w
	}
	o.obs.Observe(loop.ApprovalDecided{ToolCallID: req.ToolCallID, ToolName: req.ToolName, Action: req.Action,
		Description: req.Description, Approved: d.Approved, Feedback: d.Feedback, Answer: answer, ForSession: forSession,
		Waited: waited})
	return d, nil
}

// asker asks approval questions on out and reads the answers: single
// keys from keys on a terminal, else lines from lines.
type asker struct {
	lines     LineReader
	keys      KeyReader
	out       io.Writer
	printer   Printer
	style     func(code, s string) string
	interrupt func()
	now       func() time.Time
}

// The legend of the approval answers.
const (
	keyLegend  = "[1] approve once  [2] approve for this session  [3] reject  [4] reject with feedback"
	lineLegend = "1) approve once  2) approve for this session  3) reject  4) reject with feedback"
)

// ask implements approval.Asker and records the answer and the time the
// user took in the request's askRecord.
func (a *asker) ask(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	if a.now == nil {
		a.now = time.Now
	}
	if a.style == nil {
		a.style = func(_, s string) string { return s }
	}
	start := a.now()
	answer, feedback, err := a.askUser(ctx, req)
	if rec, ok := ctx.Value(askedKey{}).(*askRecord); ok && err == nil {
		rec.set(answer, a.now().Sub(start))
	}
	return answer, feedback, err
}

// question is the approval question: the tool, the action, what will
// happen (the description: the command, the file) and the display blocks
// (the diff).
func (a *asker) question(req approval.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s wants approval to %s\n", a.style(ansiYellow, "?"), a.style(ansiBold, req.ToolName), a.style(ansiBold, req.Action))
	if req.Description != "" {
		for _, l := range strings.Split(strings.TrimRight(req.Description, "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	for _, l := range displayLines(req.Display, a.style) {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

func (a *asker) askUser(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	if a.printer != nil {
		a.printer.Pause()
	}
	if a.keys != nil {
		return a.askKey(ctx, req)
	}
	io.WriteString(a.out, a.question(req)+"  "+lineLegend+"\n")
	for {
		line, err := a.lines.ReadLine(ctx, "answer [1-4]: ")
		if err != nil {
			return approval.Reject, "", a.readFailed(err, "(end of input: rejected)")
		}
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToLower(strings.TrimSuffix(word, ":")) {
		case "1", "y", "yes", "approve":
			return approval.Approve, "", nil
		case "2", "s", "session":
			return approval.ApproveForSession, "", nil
		case "3", "n", "no", "reject":
			return approval.Reject, "", nil
		case "4", "f", "feedback":
			if rest == "" {
				fb, err := a.lines.ReadLine(ctx, "feedback: ")
				if err != nil && !errors.Is(err, io.EOF) {
					return approval.Reject, "", err
				}
				rest = strings.TrimSpace(fb)
			}
			return approval.Reject, rest, nil
		}
		fmt.Fprintln(a.out, "  please answer 1, 2, 3 or 4")
	}
}

// readFailed settles a question whose answer could not be read: end of
// input is a rejection (noted with eofNote), an interrupt also interrupts
// the turn, any other error is returned.
func (a *asker) readFailed(err error, eofNote string) error {
	switch {
	case errors.Is(err, io.EOF):
		fmt.Fprintln(a.out, eofNote)
		return nil
	case errors.Is(err, ErrInterrupt):
		if a.interrupt != nil {
			a.interrupt()
		}
		return context.Canceled
	}
	return err
}

// askKey asks on a terminal: one key press answers, typed-ahead and
// pasted text never do.
func (a *asker) askKey(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	io.WriteString(a.out, a.question(req))
	legend := "  " + a.style(ansiDim, keyLegend)
	ignored := "  " + a.style(ansiDim, "(pasted text is not an answer: press 1, 2, 3 or 4)")
	for {
		key, err := a.keys.ReadKey(ctx, legend, ignored)
		legend = "" // shown once
		if err != nil {
			return approval.Reject, "", a.readFailed(err, "  (end of input: rejected)")
		}
		switch key {
		case '1':
			return approval.Approve, "", nil
		case '2':
			return approval.ApproveForSession, "", nil
		case '3', 0x1b:
			return approval.Reject, "", nil
		case '4':
			fb, err := a.lines.ReadLine(ctx, "feedback: ")
			if err != nil && !errors.Is(err, io.EOF) {
				if errors.Is(err, ErrInterrupt) && a.interrupt != nil {
					a.interrupt()
					return approval.Reject, "", context.Canceled
				}
				return approval.Reject, "", err
			}
			return approval.Reject, strings.TrimSpace(fb), nil
		}
	}
}
