// Package session names a run of the host and gives it a state directory:
// $XDG_STATE_HOME/kosong-host/sessions/ID (~/.local/state/... when
// XDG_STATE_HOME is unset), where the conversation history is saved as
// JSON Lines (history.jsonl, one providers.Message a line) after each turn.
package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// HistoryFile is the history's file name in the session directory.
const HistoryFile = "history.jsonl"

// Session is one run's identity and state directory.
type Session struct {
	ID  string
	Dir string
}

// Options say where sessions live.
type Options struct {
	// Root overrides the sessions directory.
	Root string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Root is the directory holding every session:
// $XDG_STATE_HOME/kosong-host/sessions, else ~/.local/state/kosong-host/sessions.
func Root(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "kosong-host", "sessions"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("session: no state directory: set XDG_STATE_HOME or HOME")
		}
	}
	return filepath.Join(home, ".local", "state", "kosong-host", "sessions"), nil
}

// NewID returns a session id: the local time, sortable, and 6 random hex
// digits, e.g. 20260102-150405-a1b2c3.
func NewID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// New starts a session and creates its directory (mode 0700).
func New(opts Options) (*Session, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	root := opts.Root
	if root == "" {
		var err error
		if root, err = Root(opts.Getenv); err != nil {
			return nil, err
		}
	}
	s := &Session{ID: NewID(opts.Now())}
	s.Dir = filepath.Join(root, s.ID)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	return s, nil
}

// Last names the newest session in Open.
const Last = "last"

// Open reopens session id (or Last, the newest) to continue it, with its
// saved history (empty if no turn was saved).
func Open(opts Options, id string) (*Session, []providers.Message, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = Root(opts.Getenv); err != nil {
			return nil, nil, err
		}
	}
	if id == Last {
		entries, err := os.ReadDir(root)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("session: %w", err)
		}
		// Ids start with their time, so the newest sorts last.
		for _, e := range entries {
			if e.IsDir() {
				id = e.Name()
			}
		}
		if id == Last {
			return nil, nil, fmt.Errorf("session: there is no session to resume in %s", root)
		}
	}
	if id == "" || filepath.Base(id) != id {
		return nil, nil, fmt.Errorf("session: %q is not a session id", id)
	}
	s := &Session{ID: id, Dir: filepath.Join(root, id)}
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("session: no session %s in %s", id, root)
	}
	history, err := LoadHistory(s.HistoryPath())
	if errors.Is(err, os.ErrNotExist) {
		return s, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return s, history, nil
}

// HistoryPath is the path of the saved history.
func (s *Session) HistoryPath() string { return filepath.Join(s.Dir, HistoryFile) }

// SaveHistory writes the whole history, replacing the saved one atomically
// (a crash leaves the old file or the new one, never half of one).
func (s *Session) SaveHistory(history []providers.Message) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, m := range history {
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("session: saving history: %w", err)
		}
	}
	tmp, err := os.CreateTemp(s.Dir, HistoryFile+".*")
	if err != nil {
		return fmt.Errorf("session: saving history: %w", err)
	}
	_, werr := tmp.Write(buf.Bytes())
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("session: saving history: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.HistoryPath()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("session: saving history: %w", err)
	}
	return nil
}

// LoadHistory reads a history file written by SaveHistory.
func LoadHistory(path string) ([]providers.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	var msgs []providers.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m providers.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("session: %s:%d: %w", path, line, err)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("session: %s: %w", path, err)
	}
	return msgs, nil
}
