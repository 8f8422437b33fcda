package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/kosong-host/kosong-host/host/approval"
)

// AskQuestions is the terminal's question picker (AskUserQuestion): for
// each question it shows the header, the question and its numbered options
// with their descriptions, and an added "Other" to type an answer of one's
// own, then reads the answer from lines. A single-choice question takes
// one number (or the text of an answer); a multi-select one takes numbers
// separated by commas or spaces, whose labels are joined with ", ". An
// empty answer, or the end of input, dismisses the remaining questions
// (Kimi's Esc): the answers given so far are kept and Dismissed is set
// when none was. Ctrl-C returns ErrInterrupt.
func AskQuestions(ctx context.Context, lines LineReader, out io.Writer, qs []approval.Question) (approval.Answers, error) {
	answers := map[string]string{}
	dismissed := func() (approval.Answers, error) {
		fmt.Fprintln(out, "  (dismissed)")
		return approval.Answers{Answers: answers, Dismissed: len(answers) == 0}, nil
	}
	for i, q := range qs {
		header := q.Header
		if header == "" {
			header = fmt.Sprintf("Q%d", i+1)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\n? [%s] %s", header, q.Question)
		if len(qs) > 1 {
			fmt.Fprintf(&b, " (%d/%d)", i+1, len(qs))
		}
		b.WriteString("\n")
		for j, o := range q.Options {
			fmt.Fprintf(&b, "  %d) %s", j+1, o.Label)
			if o.Description != "" {
				fmt.Fprintf(&b, " - %s", o.Description)
			}
			b.WriteString("\n")
		}
		other := len(q.Options) + 1
		fmt.Fprintf(&b, "  %d) Other: type your own answer\n", other)
		io.WriteString(out, b.String())
		prompt := fmt.Sprintf("answer [1-%d] (empty: dismiss): ", other)
		if q.MultiSelect {
			prompt = fmt.Sprintf("answers [1-%d, several separated by commas] (empty: dismiss): ", other)
		}
		for {
			line, err := lines.ReadLine(ctx, prompt)
			switch {
			case errors.Is(err, io.EOF):
				return dismissed()
			case err != nil:
				return approval.Answers{}, err
			}
			line = strings.TrimSpace(line)
			if line == "" {
				return dismissed()
			}
			answer, own, ok := pick(q, line, other)
			if own {
				text, err := lines.ReadLine(ctx, "your answer: ")
				if err != nil && !errors.Is(err, io.EOF) {
					return approval.Answers{}, err
				}
				if text = strings.TrimSpace(text); text == "" {
					return dismissed()
				}
				answer, ok = text, true
			}
			if ok {
				answers[q.Question] = answer
				break
			}
			if q.MultiSelect {
				fmt.Fprintf(out, "  please answer numbers from 1 to %d, e.g. 1,3\n", other)
			} else {
				fmt.Fprintf(out, "  please answer a number from 1 to %d\n", other)
			}
		}
	}
	return approval.Answers{Answers: answers}, nil
}

// pick reads one answer line: the chosen labels, or own when the user
// chose Other. A single-choice answer that is not a number is the user's
// own answer.
func pick(q approval.Question, line string, other int) (answer string, own, ok bool) {
	fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' })
	var labels []string
	seen := map[int]bool{}
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil {
			if !q.MultiSelect {
				return line, false, true
			}
			return "", false, false
		}
		switch {
		case n == other && len(fields) == 1:
			return "", true, false
		case n < 1 || n > len(q.Options):
			return "", false, false
		case seen[n]:
			continue
		}
		seen[n] = true
		labels = append(labels, q.Options[n-1].Label)
	}
	if len(labels) == 0 || (!q.MultiSelect && len(labels) > 1) {
		return "", false, false
	}
	return strings.Join(labels, ", "), false, true
}

// questioner is the REPL's approval.UserInput.
type questioner struct {
	lines     LineReader
	out       io.Writer
	printer   Printer
	interrupt func()
	mu        sync.Mutex // one set of questions at a time
}

func (q *questioner) Ask(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.printer != nil {
		q.printer.Pause()
	}
	a, err := AskQuestions(ctx, q.lines, q.out, req.Questions)
	if errors.Is(err, ErrInterrupt) {
		if q.interrupt != nil {
			q.interrupt()
		}
		return approval.Answers{}, context.Canceled
	}
	return a, err
}

// Questions is the approval.UserInput of this REPL: AskQuestions on
// Prompts, answers read from Lines; Ctrl-C at the picker cancels the turn.
func (r *REPL) Questions() approval.UserInput {
	return heldQuestions{r: r, q: &questioner{lines: r.cfg.Lines, out: r.cfg.Prompts, printer: r.cfg.Printer, interrupt: r.Interrupt}}
}
