package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/term"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/repl"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// refusals passes the loop's events on and counts the tool calls that
// were refused (their approval rejected).
type refusals struct {
	loop.Observer
	n atomic.Int64
	// atLimit: a turn stopped at a limit of the run (--max-turns...).
	atLimit atomic.Bool
}

func (r *refusals) Observe(e loop.Event) {
	if f, ok := e.(loop.ToolCallFinished); ok && f.Result.Kind == toolset.Rejected {
		r.n.Add(1)
	}
	if _, ok := e.(loop.LimitReached); ok {
		r.atLimit.Store(true)
	}
	r.Observer.Observe(e)
}

func (r *refusals) count() int { return int(r.n.Load()) }

// oneShot runs one turn. In text mode stdout gets the final answer and
// nothing else; with stream-json the result event closes the stream.
func oneShot(ctx context.Context, conv *conversation.Conversation, input string, refused *refusals, fe *frontEnd,
	stdout io.Writer, streamJSON bool) error {
	start := len(conv.History())
	res, err := conv.Turn(ctx, input)
	history := conv.History()
	text, answered := finalText(history[min(start, len(history)):])
	n := refused.count()
	if jp, ok := fe.printer.(*repl.JSONPrinter); ok && streamJSON {
		spent := conv.Spent()
		ev := streamjson.ResultEvent{Subtype: streamjson.Subtype(string(res.Reason), err), Text: text, StopReason: string(res.Reason),
			Usage: res.Usage, SessionID: conv.ID(), Steps: res.Steps, Refused: n, ExitCode: turnCode(res, err, n),
			CostUSD: streamjson.Cost(res.CostUSD, res.Priced), TotalCostUSD: streamjson.Cost(spent.CostUSD, res.Priced), NumTurns: spent.Turns}
		if err != nil {
			ev.Error = err.Error()
		}
		jp.Result(ev)
	} else if text != "" && err == nil && answered {
		// A failed or cut-short turn has no answer: its last text was
		// said on the way (stderr has it), not the result.
		if isTerminal(stdout) && os.Getenv("NO_COLOR") == "" {
			text = repl.RenderMarkdown(text, terminalWidth(stdout))
		}
		fmt.Fprint(stdout, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	return turnExit(res, err, n, streamJSON)
}

// finalText is the text of the last assistant message of msgs; answered
// says it called no tool, so it is the answer rather than text said on the
// way to a tool call.
func finalText(msgs []providers.Message) (text string, answered bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == providers.RoleAssistant {
			return strings.TrimSpace(msgs[i].Text()), len(msgs[i].ToolCalls) == 0
		}
	}
	return "", false
}

// terminalWidth is the width of the terminal w, or 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
