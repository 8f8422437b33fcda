package command

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/kosong-host/kosong-host/host/conversation"
)

// runUndo removes the last turn and restores the files it edited.
func runUndo(ctx context.Context, e Env, arg string) {
	if arg != "" {
		e.say("/undo takes no argument; /rewind N removes the last N turns")
		return
	}
	rewind(ctx, e, 1)
}

// runRewind removes the last N turns (default 1), newest first.
func runRewind(ctx context.Context, e Env, arg string) {
	n := 1
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			e.say("error: /rewind N takes a number of turns, 1 or more; %q is not one", arg)
			return
		}
		n = v
	}
	rewind(ctx, e, n)
}

func rewind(ctx context.Context, e Env, n int) {
	for i := 0; i < n; i++ {
		res, err := e.Conv.Rewind(ctx)
		if errors.Is(err, conversation.ErrNothingToRewind) && i > 0 {
			e.say("no earlier turn to remove")
			return
		}
		if res.Prompt == "" && err != nil {
			e.say("error: %v", err)
			return
		}
		msg := "Removed the turn of " + strconv.Quote(clipLine(strings.Join(strings.Fields(res.Prompt), " "), 60)) + " from the history"
		switch {
		case len(res.Files) > 0:
			msg += "; restored " + strings.Join(res.Files, ", ")
		default:
			msg += "; it edited no file with the file tools"
		}
		e.say("%s.", msg)
		for _, f := range res.NotRestored {
			e.say("  not restored: %s", f)
		}
		if err != nil {
			e.say("warning: %v", err)
		}
	}
}
