package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/session"
)

// runExport writes the conversation as Markdown to FILE (relative to the
// work dir; default kosong-SESSION.md); an existing file is left alone.
func runExport(_ context.Context, e Env, arg string) {
	history := e.Conv.History()
	if len(history) == 0 {
		e.say("nothing to export yet: the conversation is empty")
		return
	}
	id := e.Conv.ID()
	path := arg
	if path == "" {
		path = "kosong-" + id + ".md"
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.workDir(), path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		e.say("error: %s exists; /export FILE writes a new file", path)
		return
	}
	if err != nil {
		e.say("error: %v", err)
		return
	}
	_, werr := f.WriteString(session.Markdown("Session "+id, history))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path)
		e.say("error: %v", err)
		return
	}
	e.say("%s", fmt.Sprintf("The conversation is in %s (%d messages).", path, len(history)))
}
