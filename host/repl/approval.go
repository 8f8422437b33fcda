package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

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

// NewDecider returns the decider of a run; every decision is reported to
// obs as a loop.ApprovalDecided event. ask is used in Ask mode only.
func NewDecider(mode ApprovalMode, ask approval.Asker, obs loop.Observer) approval.Decider {
	switch mode {
	case Yolo:
		return &observed{d: approval.Yolo{}, obs: obs, answer: AnswerYolo}
	case Unattended:
		return &observed{d: approval.Deny{Feedback: approval.UnattendedFeedback}, obs: obs, answer: AnswerUnattended}
	}
	return &observed{d: approval.NewSession(ask), obs: obs, answer: AnswerSession}
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
}

func (r *askRecord) set(a approval.Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked, r.answer = true, a
}

func (r *askRecord) get() (approval.Answer, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answer, r.asked
}

func (o *observed) Decide(ctx context.Context, req approval.Request) (approval.Decision, error) {
	// The asker records the user's answer, which tells a decision of the
	// user from one remembered for the session.
	asked := &askRecord{}
	d, err := o.d.Decide(context.WithValue(ctx, askedKey{}, asked), req)
	if err != nil {
		return d, err
	}
	answer, forSession := o.answer, false
	if a, ok := asked.get(); ok {
		answer, forSession = AnswerUser, a == approval.ApproveForSession
	}
	o.obs.Observe(loop.ApprovalDecided{ToolCallID: req.ToolCallID, ToolName: req.ToolName, Action: req.Action,
		Description: req.Description, Approved: d.Approved, Feedback: d.Feedback, Answer: answer, ForSession: forSession})
	return d, nil
}

// asker asks approval questions on out and reads the answers from lines.
type asker struct {
	lines     LineReader
	out       io.Writer
	printer   Printer
	interrupt func()
}

// ask implements approval.Asker. The answers: 1/y/yes (approve),
// 2/s/session (approve for this session), 3/n/no (reject), 4/f/feedback
// (reject with feedback: the text after the answer, or the next line).
// Anything else asks again. The end of input rejects; Ctrl-C interrupts
// the turn.
func (a *asker) ask(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	answer, feedback, err := a.askUser(ctx, req)
	if rec, ok := ctx.Value(askedKey{}).(*askRecord); ok && err == nil {
		rec.set(answer)
	}
	return answer, feedback, err
}

func (a *asker) askUser(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	if a.printer != nil {
		a.printer.Pause()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n? %s wants approval to %s\n", req.ToolName, req.Action)
	if req.Description != "" {
		fmt.Fprintf(&b, "  %s\n", req.Description)
	}
	for _, l := range displayLines(req.Display) {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	b.WriteString("  1) approve  2) approve for this session  3) reject  4) reject with feedback\n")
	io.WriteString(a.out, b.String())
	for {
		line, err := a.lines.ReadLine(ctx, "answer [1-4]: ")
		switch {
		case errors.Is(err, io.EOF):
			fmt.Fprintln(a.out, "(end of input: rejected)")
			return approval.Reject, "", nil
		case errors.Is(err, ErrInterrupt):
			if a.interrupt != nil {
				a.interrupt()
			}
			return approval.Reject, "", context.Canceled
		case err != nil:
			return approval.Reject, "", err
		}
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToLower(strings.TrimSuffix(word, ":")) {
		case "1", "y", "yes", "a", "approve":
			return approval.Approve, "", nil
		case "2", "s", "session":
			return approval.ApproveForSession, "", nil
		case "3", "n", "no", "r", "reject":
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
