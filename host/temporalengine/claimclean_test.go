package temporalengine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// TestClaimsDroppedPerSession: a session's claims are removed when it
// closes, and only its own: another session's claim of the very same
// tool output (same content, same hash) stays.
func TestClaimsDroppedPerSession(t *testing.T) {
	dir := t.TempDir()
	// The output session A's tool will return, stored by session B first.
	r := toolset.Result{ToolCallID: "call_big", Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart(strings.Repeat("x", 4000))}}
	other, err := claims{dir: dir, over: 1024}.store("kosong-session-b", r.ToolMessage())
	if err != nil {
		t.Fatal(err)
	}
	otherPath := filepath.Join(dir, "kosong-session-b", claimOf(other)+".json")

	out, res, seen := runOne(t, dir, 4000, SessionInput{WorkDir: "/w"})
	if out.Error != "" || len(seen) != 1 || claimOf(res.History[2]) == "" {
		t.Fatalf("turn: %+v, %d results seen, history %.300q", out, len(seen), texts(res.History))
	}
	if claimOf(res.History[2]) != claimOf(other) {
		t.Errorf("the two sessions' claims differ (%s, %s): the test does not check a shared content", claimOf(res.History[2]), claimOf(other))
	}
	if _, err := os.Stat(filepath.Join(dir, claimFolderName("default-test-workflow-id"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the closed session's claim folder: %v, want it removed", err)
	}
	if _, err := os.Stat(otherPath); err != nil {
		t.Errorf("another session's claim of the same output: %v", err)
	}
}

// TestSweepClaims: the sweep removes the claim files unused for longer
// than the TTL, in the session folders and in the directory itself, and
// the folders left empty; it keeps recent files and whatever is not a
// claim.
func TestSweepClaims(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	files := []struct {
		path  string
		mtime time.Time
		kept  bool
	}{
		{"s1/aaa.json", old, false},
		{"s1/bbb.json", recent, true},
		{"s2/ccc.json", old, false},
		{"s2/ddd.1234.tmp", old, false},
		{"eee.json", old, false},
		{"fff.json", recent, true},
		{"notes.txt", old, true},
		{"s3/deeper/ggg.json", old, true},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	n, err := sweepClaims(dir, 24*time.Hour, now)
	if err != nil || n != 4 {
		t.Errorf("sweep: removed %d, %v; want 4", n, err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.path))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept %v, want %v", f.path, kept, f.kept)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s2")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty session folder s2: %v, want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "s1")); err != nil {
		t.Errorf("session folder s1 with a recent claim: %v", err)
	}
}

// TestClaimReadTouches: a model request's read of a claim makes it
// recent for the sweep; an old claim file of the flat layout is read too.
func TestClaimReadTouches(t *testing.T) {
	dir := t.TempDir()
	c := claims{dir: dir, over: 100}
	big := toolText("call_1", strings.Repeat("y", 2000), false)
	stored, err := c.store("s1", big)
	if err != nil {
		t.Fatal(err)
	}
	name := claimOf(stored) + ".json"
	flat := filepath.Join(dir, name)
	if err := os.Rename(filepath.Join(dir, "s1", name), flat); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(flat, old, old); err != nil {
		t.Fatal(err)
	}
	got, err := c.resolve("s1", []providers.Message{stored})
	if err != nil || got[0].Text() != big.Text() {
		t.Fatalf("resolve from the flat layout: %v", err)
	}
	if n, err := sweepClaims(dir, 24*time.Hour, time.Now()); n != 0 || err != nil {
		t.Errorf("the sweep removed %d files just read (%v)", n, err)
	}
}
