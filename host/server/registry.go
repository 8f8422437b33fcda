package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// RegistryFile is the server's list of its sessions, in its state folder.
const RegistryFile = "sessions.json"

// record is what the server keeps of a session across restarts; the
// session itself (history, metadata) is saved where every session is.
type record struct {
	ID        string `json:"id"`
	Cwd       string `json:"cwd"`
	Agent     string `json:"agent"`
	AgentFile string `json:"agent_file,omitempty"`
	// AgentRequested is the request's agent file ("" found by cwd).
	AgentRequested string    `json:"agent_requested,omitempty"`
	Model          string    `json:"model,omitempty"`
	Mode           string    `json:"mode"`
	Created        time.Time `json:"created"`
	LastSeq        int64     `json:"last_seq"`
	Interrupted    bool      `json:"interrupted"`
	// Engine names the Remote engine the session runs on ("" in process);
	// the fields below are its turn the server follows.
	Engine string `json:"engine,omitempty"`
	// Turn is the number of the turn last started through the server;
	// TurnStart the history's length when it started; Seen the length
	// whose messages' events are logged; TurnEnded: its turn_end is.
	Turn      int  `json:"turn,omitempty"`
	TurnStart int  `json:"turn_start,omitempty"`
	Seen      int  `json:"seen,omitempty"`
	TurnEnded bool `json:"turn_ended,omitempty"`
	// Cursor is the position in the followed turn's live feed (RemoteFeed)
	// of the last feed event logged; FeedStep the last step the feed
	// started (the history's events of the steps after it are what a feed
	// that stops early leaves to log).
	Cursor   string `json:"cursor,omitempty"`
	FeedStep int    `json:"feed_step,omitempty"`
}

// registry is the file of records.
type registry struct {
	path string
	mu   sync.Mutex
	recs map[string]record
}

func loadRegistry(path string) (*registry, error) {
	r := &registry{path: path, recs: map[string]record{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Sessions []record `json:"sessions"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, rec := range f.Sessions {
		if rec.ID != "" {
			r.recs[rec.ID] = rec
		}
	}
	return r, nil
}

func (r *registry) list() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]record, 0, len(r.recs))
	for _, rec := range r.recs {
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out
}

func (r *registry) put(rec record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs[rec.ID] = rec
	return r.saveLocked()
}

func (r *registry) remove(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.recs, id)
	return r.saveLocked()
}

func (r *registry) saveLocked() error {
	recs := make([]record, 0, len(r.recs))
	for _, rec := range r.recs {
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b record) int { return a.Created.Compare(b.Created) })
	b, err := json.MarshalIndent(map[string]any{"sessions": recs}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

func sortStrings(s []string) { slices.Sort(s) }
