package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kosong-host/kosong-host/host/approval"
)

// asker asks approval questions on out and reads the answers: single
// keys from keys on a terminal, else lines from lines.
type asker struct {
	lines     LineReader
	keys      KeyReader
	out       io.Writer
	printer   Printer
	style     func(code, s string) string
	interrupt func()
}

// The legend of the approval answers.
const (
	keyLegend  = "[1] approve once  [2] approve for this session  [3] reject  [4] reject with feedback"
	lineLegend = "1) approve once  2) approve for this session  3) reject  4) reject with feedback"
)

// ask implements approval.Asker.
func (a *asker) ask(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	if a.style == nil {
		a.style = func(_, s string) string { return s }
	}
	return a.askUser(ctx, req)
}

// question is the approval question: the tool, the action, what will
// happen (the description: the command, the file) and the display blocks
// (the diff).
func (a *asker) question(req approval.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s wants approval to %s", a.style(ansiYellow, "?"), a.style(ansiBold, req.ToolName), a.style(ansiBold, req.Action))
	if req.Plugin != "" {
		// The host names the tool and the plugin; the action and the
		// description are the plugin's own words.
		fmt.Fprintf(&b, " (plugin %s)", req.Plugin)
	}
	b.WriteString("\n")
	if req.Description != "" {
		if req.Plugin != "" {
			fmt.Fprintf(&b, "  plugin %s says:\n", req.Plugin)
		}
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
