package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// MetaFile is the file in the session directory that says where and with
// which agent the session runs.
const MetaFile = "session.json"

// Meta describes a session: its work dir and agent. Sessions written before
// there was a MetaFile have none (an empty Meta).
type Meta struct {
	// WorkDir is the absolute folder the session works in.
	WorkDir string `json:"work_dir"`
	// Agent is the agent's name.
	Agent string `json:"agent"`
	// AgentFile is the spec file, or "built-in default".
	AgentFile string    `json:"agent_file,omitempty"`
	Created   time.Time `json:"created"`
}

// WriteMeta saves m in the session directory.
func (s *Session) WriteMeta(m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	tmp := filepath.Join(s.Dir, MetaFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, MetaFile)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// ReadMeta reads the Meta of the session in dir; a session without one
// gives an empty Meta and no error.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("session: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("session: %s: %w", filepath.Join(dir, MetaFile), err)
	}
	return m, nil
}

// Info is one session as List shows it.
type Info struct {
	ID  string
	Dir string
	Meta
	// Updated is when the history was last saved (else when the session
	// was created).
	Updated time.Time
	// FirstPrompt is the first prompt the user typed, "" if none was
	// saved: the host's notes in user messages (a compaction's summary, an
	// interruption) and the files attached to a prompt are not shown.
	FirstPrompt string
	// Totals sum the session's turns; HasTotals is false for a session
	// without them (from before they were kept, or with no turn yet).
	Totals    Totals
	HasTotals bool
}

// List returns the sessions, newest (last updated) first. workDir, if not
// empty, keeps the sessions of that folder only. A session whose files
// cannot be read is listed with what is known.
func List(opts Options, workDir string) ([]Info, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = Root(opts.Getenv); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		meta, _ := ReadMeta(dir)
		if workDir != "" && meta.WorkDir != workDir {
			continue
		}
		info := Info{ID: e.Name(), Dir: dir, Meta: meta, Updated: meta.Created}
		info.Totals, info.HasTotals, _ = ReadTotals(dir)
		if st, err := os.Stat(filepath.Join(dir, HistoryFile)); err == nil {
			info.Updated = st.ModTime()
			info.FirstPrompt = firstPrompt(filepath.Join(dir, HistoryFile))
		} else if info.Updated.IsZero() {
			if st, err := e.Info(); err == nil {
				info.Updated = st.ModTime()
			}
		}
		out = append(out, info)
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// Latest is the most recent session of workDir.
func Latest(opts Options, workDir string) (Info, error) {
	list, err := List(opts, workDir)
	if err != nil {
		return Info{}, err
	}
	if len(list) == 0 {
		return Info{}, fmt.Errorf("session: there is no session of %s to continue (kosong-host sessions --all lists every session)", workDir)
	}
	return list[0], nil
}

// NotePrefix starts the user messages the host writes itself (a
// compaction's summary, the note of an interrupted turn): they are not
// prompts the user typed.
const NotePrefix = "<system>"

// UserPrompt is what the user typed in message m: its first text part,
// unless m is not a user message or is a note of the host (NotePrefix).
func UserPrompt(m providers.Message) (string, bool) {
	if m.Role != providers.RoleUser || len(m.Content) == 0 || m.Content[0].Type != providers.PartText {
		return "", false
	}
	t := m.Content[0].Text
	if strings.HasPrefix(t, NotePrefix) {
		return "", false
	}
	return t, true
}

// firstPrompt reads the history file up to its first user prompt.
func firstPrompt(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var m providers.Message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if p, ok := UserPrompt(m); ok {
			return p
		}
	}
	return ""
}

// LastExchange is the last user message of history and the assistant's
// text answers after it, for a recap of a resumed session.
func LastExchange(history []providers.Message) (user, assistant string) {
	i := len(history) - 1
	for ; i >= 0 && history[i].Role != providers.RoleUser; i-- {
	}
	if i < 0 {
		return "", ""
	}
	var parts []string
	for _, m := range history[i+1:] {
		if m.Role == providers.RoleAssistant {
			if t := strings.TrimSpace(m.Text()); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return history[i].Text(), strings.Join(parts, "\n")
}
