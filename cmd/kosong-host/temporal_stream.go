package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/repl"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/providers"
)

// observedEngine is an engine that shows a turn's events as they happen
// (temporalengine.Session: its turn's feed, as host/loop events).
type observedEngine interface {
	conversation.Engine
	TurnObserved(ctx context.Context, input string, observe func(loop.Event)) (loop.TurnResult, error)
}

// engineOneShotLive runs one turn of a new session of an engine that shows
// its events live, as oneShot does in process: with streamJSON the
// session event, then the turn's events as they come (the text and
// reasoning deltas, tool calls and results, usage, turn_end) and the
// result event; in text mode the progress on stderr (the text said before
// tool calls, the tool lines, the usage) and only the final answer on
// stdout.
func engineOneShotLive(ctx context.Context, eng observedEngine, input string, stdout, stderr io.Writer, streamJSON bool) error {
	defer eng.Close()
	var observe func(loop.Event)
	if streamJSON {
		w := streamjson.NewWriter(stdout)
		_ = w.Write(streamjson.SessionEvent{Type: "session", SessionID: eng.ID(), Tools: []string{}})
		observe = func(e loop.Event) {
			if v := streamjson.FromLoop(e); v != nil {
				_ = w.Write(v)
			}
		}
		res, err := eng.TurnObserved(ctx, input, observe)
		history := eng.History()
		text, _ := finalText(history)
		result := streamjson.ResultEvent{Type: "result", Subtype: streamjson.Subtype(string(res.Reason), err), Text: text,
			StopReason: string(res.Reason), Usage: res.Usage, SessionID: eng.ID(), Steps: res.Steps, ExitCode: turnCode(res, err, 0),
			NumTurns: responses(history)}
		if err != nil {
			result.Error = err.Error()
		}
		_ = w.Write(result)
		return turnExit(res, err, 0, true)
	}
	p := repl.NewTextPrinter(stderr, stderr, repl.TextOptions{TTY: isTerminal(stderr), OneShot: true,
		Color: isTerminal(stderr) && os.Getenv("NO_COLOR") == ""})
	res, err := eng.TurnObserved(ctx, input, p.Observe)
	text, answered := finalText(eng.History())
	if err == nil && text != "" && answered {
		fmt.Fprint(stdout, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	return turnExit(res, err, 0, false)
}

// responses counts the model responses of a history.
func responses(history []providers.Message) int {
	n := 0
	for _, m := range history {
		if m.Role == providers.RoleAssistant {
			n++
		}
	}
	return n
}
