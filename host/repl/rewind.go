package repl

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/kosong-host/kosong-host/host/conversation"
)

// cmdUndo removes the last turn and restores the files it edited.
func (r *REPL) cmdUndo(ctx context.Context, arg string) bool {
	if arg != "" {
		r.say("/undo takes no argument; /rewind N removes the last N turns")
		return false
	}
	r.rewind(ctx, 1)
	return false
}

// cmdRewind removes the last N turns (default 1), newest first.
func (r *REPL) cmdRewind(ctx context.Context, arg string) bool {
	n := 1
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			r.say("error: /rewind N takes a number of turns, 1 or more; %q is not one", arg)
			return false
		}
		n = v
	}
	r.rewind(ctx, n)
	return false
}

func (r *REPL) rewind(ctx context.Context, n int) {
	for i := 0; i < n; i++ {
		res, err := r.conv.Rewind(ctx)
		if errors.Is(err, conversation.ErrNothingToRewind) && i > 0 {
			r.say("no earlier turn to remove")
			return
		}
		if res.Prompt == "" && err != nil {
			r.say("error: %v", err)
			return
		}
		msg := "Removed the turn of " + strconv.Quote(clipLine(strings.Join(strings.Fields(res.Prompt), " "), 60)) + " from the history"
		switch {
		case len(res.Files) > 0:
			msg += "; restored " + strings.Join(res.Files, ", ")
		default:
			msg += "; it edited no file with the file tools"
		}
		r.say("%s.", msg)
		for _, f := range res.NotRestored {
			r.say("  not restored: %s", f)
		}
		if err != nil {
			r.say("warning: %v", err)
		}
	}
}
