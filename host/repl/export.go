package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/session"
)

// cmdExport writes the conversation as Markdown to FILE (relative to the
// work dir; default kosong-SESSION.md); an existing file is left alone.
func (r *REPL) cmdExport(_ context.Context, arg string) bool {
	history := r.conv.History()
	if len(history) == 0 {
		r.say("nothing to export yet: the conversation is empty")
		return false
	}
	id := r.conv.ID()
	path := arg
	if path == "" {
		path = "kosong-" + id + ".md"
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.workDir(), path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		r.say("error: %s exists; /export FILE writes a new file", path)
		return false
	}
	if err != nil {
		r.say("error: %v", err)
		return false
	}
	_, werr := f.WriteString(session.Markdown("Session "+id, history))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path)
		r.say("error: %v", err)
		return false
	}
	r.say("%s", fmt.Sprintf("The conversation is in %s (%d messages).", path, len(history)))
	return false
}
