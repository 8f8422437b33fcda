package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// FileEditTools are the tools whose "path" argument names a file they
// edit: a copy of it is kept before the turn's first edit (see
// session.Checkpoints), for Rewind.
var FileEditTools = map[string]bool{"WriteFile": true, "StrReplaceFile": true}

// checkpointGuard is the session's guard, and keeps a copy of a file
// before a file tool's call that the guard admits (the tool asks its
// approval only after, and writes after that).
type checkpointGuard struct {
	toolset.Guard
	cp      *session.Checkpoints
	workDir string
}

func (g checkpointGuard) Admit(ctx context.Context, c toolset.Call) *toolset.Result {
	if r := g.Guard.Admit(ctx, c); r != nil {
		return r
	}
	if p := g.editedPath(c); p != "" {
		_ = g.cp.Before(p) // a failed copy is said at rewind
	}
	return nil
}

// Done marks the file of a file tool's call that went through as edited:
// a rewind restores only those.
func (g checkpointGuard) Done(ctx context.Context, c toolset.Call, r toolset.Result) {
	g.Guard.Done(ctx, c, r)
	if p := g.editedPath(c); p != "" && !r.IsError() {
		g.cp.Edited(p)
	}
}

// editedPath is the absolute path a file tool's call edits, "" for other
// calls.
func (g checkpointGuard) editedPath(c toolset.Call) string {
	if !FileEditTools[c.Spec.Name] {
		return ""
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(c.Args, &args) != nil || args.Path == "" {
		return ""
	}
	p := args.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.workDir, p)
	}
	return filepath.Clean(p)
}

// ErrNothingToRewind: the history has no prompt of the user.
var ErrNothingToRewind = errors.New("nothing to rewind: no prompt in this session yet")

// Rewound is what Rewind did.
type Rewound struct {
	// Prompt is the user's prompt of the turn removed.
	Prompt string
	session.Restored
}

// Rewind removes the last turn from the history (the user's last prompt
// and all after it) and puts back the files the turn's file tools edited,
// as they were before it. It returns ErrBusy while a turn runs.
func (c *Conversation) Rewind(ctx context.Context) (Rewound, error) {
	if c.asm == nil {
		return Rewound{}, ErrCannotChange
	}
	_, end, err := c.begin(ctx)
	if err != nil {
		return Rewound{}, err
	}
	defer end()
	history := c.History()
	i := len(history) - 1
	var prompt string
	for ; i >= 0; i-- {
		if p, ok := session.UserPrompt(history[i]); ok {
			prompt = p
			break
		}
	}
	if i < 0 {
		return Rewound{}, ErrNothingToRewind
	}
	c.asm.mu.Lock()
	p, size := c.asm.provider, c.asm.contextSize
	c.asm.mu.Unlock()
	l, err := c.asm.newLoop(p, append([]providers.Message(nil), history[:i]...), size)
	if err != nil {
		return Rewound{}, err
	}
	c.mu.Lock()
	c.l = l
	sess := c.sess
	c.mu.Unlock()
	res := Rewound{Prompt: prompt}
	restored, rerr := session.Restore(sess.Dir, i, prompt)
	res.Restored = restored
	return res, errors.Join(rerr, c.save(l))
}
