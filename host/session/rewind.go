package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Checkpoints keep, for each turn, a copy of every file the turn's file
// tools edit, taken before the first edit, so that rewinding the turn
// restores the files (as Claude Code's file history does). They live in
// the session folder: checkpoints/turn-N, N the index in the history of the
// turn's user message, with manifest.json and one copy a file. A file over
// MaxCheckpointFile, or past MaxCheckpointTurn of copies in one turn, is
// noted and not copied: rewinding says it was not restored.
type Checkpoints struct {
	mu  sync.Mutex
	cur *turnCheckpoint
}

// Bounds of the copies.
const (
	MaxCheckpointFile = 1 << 20
	MaxCheckpointTurn = 16 << 20
)

// CheckpointsDir is the folder of the checkpoints in a session folder.
const CheckpointsDir = "checkpoints"

type turnCheckpoint struct {
	dir   string
	m     checkpointManifest
	seen  map[string]bool
	total int64
}

type checkpointManifest struct {
	// Index is the index of the turn's user message in the history;
	// Prompt its text, to check a rewind finds the same turn.
	Index  int            `json:"index"`
	Prompt string         `json:"prompt"`
	Files  []fileSnapshot `json:"files"`
}

// fileSnapshot is one file as it was before the turn edited it.
type fileSnapshot struct {
	Path    string      `json:"path"`
	Existed bool        `json:"existed"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	// Copy is the copy's file name in the checkpoint; "" with Skipped.
	Copy string `json:"copy,omitempty"`
	// Skipped says why the file was not copied.
	Skipped string `json:"skipped,omitempty"`
	// Edited: an edit of the file went through (else the turn's edits
	// of it were refused or failed, and a rewind leaves it alone).
	Edited bool `json:"edited"`
}

func turnDir(sessionDir string, index int) string {
	return filepath.Join(sessionDir, CheckpointsDir, "turn-"+strconv.Itoa(index))
}

// Begin starts the checkpoint of the turn whose user message will be at
// index of the history; checkpoints of turns at or after index (rewound
// or compacted away) are removed.
func (c *Checkpoints) Begin(sessionDir string, index int, prompt string) {
	root := filepath.Join(sessionDir, CheckpointsDir)
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "turn-")); err == nil && n >= index {
				os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = &turnCheckpoint{dir: turnDir(sessionDir, index), m: checkpointManifest{Index: index, Prompt: prompt},
		seen: map[string]bool{}}
}

// End ends the turn's checkpoint.
func (c *Checkpoints) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = nil
}

// Before keeps a copy of path (absolute) before its first edit in the
// turn, and Edited marks it once an edit went through (only those are
// restored); outside a turn they do nothing. An error is the checkpoint's
// (the folder cannot be written): the edit may go ahead, but the turn
// cannot be rewound whole.
func (c *Checkpoints) Before(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.cur
	if t == nil || t.seen[path] {
		return nil
	}
	t.seen[path] = true
	snap := fileSnapshot{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		snap.Skipped = err.Error()
	case !fi.Mode().IsRegular():
		snap.Existed, snap.Skipped = true, "not a regular file"
	case fi.Size() > MaxCheckpointFile:
		snap.Existed, snap.Skipped = true, fmt.Sprintf("over %d MiB", MaxCheckpointFile>>20)
	case t.total+fi.Size() > MaxCheckpointTurn:
		snap.Existed, snap.Skipped = true, fmt.Sprintf("past the %d MiB of copies a turn keeps", MaxCheckpointTurn>>20)
	default:
		snap.Existed, snap.Mode = true, fi.Mode().Perm()
		snap.Copy = strconv.Itoa(len(t.m.Files))
		if err := copyInto(path, t.dir, snap.Copy); err != nil {
			snap.Copy, snap.Skipped = "", err.Error()
		} else {
			t.total += fi.Size()
		}
	}
	t.m.Files = append(t.m.Files, snap)
	return t.writeManifest()
}

// Edited notes that an edit of path went through in the turn.
func (c *Checkpoints) Edited(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.cur
	if t == nil {
		return
	}
	for i := range t.m.Files {
		if t.m.Files[i].Path == path && !t.m.Files[i].Edited {
			t.m.Files[i].Edited = true
			_ = t.writeManifest() // a manifest that cannot be written fails at rewind
		}
	}
}

func (t *turnCheckpoint) writeManifest() error {
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	b, err := json.MarshalIndent(t.m, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.WriteFile(filepath.Join(t.dir, "manifest.json"), b, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func copyInto(path, dir, name string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(dst, io.LimitReader(src, MaxCheckpointFile+1))
	return errors.Join(cerr, dst.Close())
}

// Restored says what rewinding a turn did to its files.
type Restored struct {
	// Files were put back as they were before the turn (or removed, for
	// files the turn created).
	Files []string
	// NotRestored are the files that could not be, each with the reason.
	NotRestored []string
}

// Restore puts back the files the turn at index edited, as they were
// before it, and removes the turn's checkpoint. A turn without a
// checkpoint edited no file. prompt must be the turn's (a checkpoint of
// another turn at that index, e.g. after a compaction, is not used).
func Restore(sessionDir string, index int, prompt string) (Restored, error) {
	var res Restored
	dir := turnDir(sessionDir, index)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("checkpoint: %w", err)
	}
	var m checkpointManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return res, fmt.Errorf("checkpoint: %s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Index != index || m.Prompt != prompt {
		return res, fmt.Errorf("checkpoint: %s is of another turn (the history was compacted since); no file was restored", dir)
	}
	for _, f := range m.Files {
		if !f.Edited {
			continue
		}
		if err := restoreFile(dir, f); err != nil {
			res.NotRestored = append(res.NotRestored, f.Path+": "+err.Error())
			continue
		}
		res.Files = append(res.Files, f.Path)
	}
	return res, os.RemoveAll(dir)
}

func restoreFile(dir string, f fileSnapshot) error {
	switch {
	case f.Skipped != "":
		return errors.New("no copy was kept: " + f.Skipped)
	case !f.Existed:
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, f.Copy))
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Chmod(f.Mode), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
