package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckpointsRestore(t *testing.T) {
	sess, work := t.TempDir(), t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edited := write("edited", "before", 0o640)
	big := write("big", strings.Repeat("x", MaxCheckpointFile+1), 0o644)
	created := filepath.Join(work, "created")

	var c Checkpoints
	if err := c.Before(edited); err != nil { // outside a turn: nothing kept
		t.Fatal(err)
	}
	c.Begin(sess, 4, "do it")
	refused := write("refused", "as it was", 0o644)
	for _, p := range []string{edited, big, created, edited, refused} {
		if err := c.Before(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{edited, big, created} {
		c.Edited(p)
	}
	c.End()
	write("refused", "changed by a shell command", 0o644)
	write("edited", "after", 0o600)
	write("created", "new", 0o644)

	if _, err := Restore(sess, 4, "another prompt"); err == nil || !strings.Contains(err.Error(), "is of another turn") {
		t.Fatalf("a checkpoint of another prompt: %v", err)
	}
	res, err := Restore(sess, 4, "do it")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Files, "|") != edited+"|"+created {
		t.Errorf("restored %q", res.Files)
	}
	if len(res.NotRestored) != 1 || !strings.HasPrefix(res.NotRestored[0], big+": no copy was kept: over 1 MiB") {
		t.Errorf("not restored %q", res.NotRestored)
	}
	if b, _ := os.ReadFile(refused); string(b) != "changed by a shell command" {
		t.Errorf("a file whose edit was refused was restored: %q", b)
	}
	if b, _ := os.ReadFile(edited); string(b) != "before" {
		t.Errorf("edited is %q", b)
	}
	if fi, _ := os.Stat(edited); fi.Mode().Perm() != 0o640 {
		t.Errorf("edited has mode %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Errorf("created is still there: %v", err)
	}
	if _, err := os.Stat(turnDir(sess, 4)); !os.IsNotExist(err) {
		t.Errorf("the checkpoint is kept after the restore: %v", err)
	}
	if res, err := Restore(sess, 4, "do it"); err != nil || len(res.Files)+len(res.NotRestored) != 0 {
		t.Errorf("a turn without a checkpoint: %+v, %v", res, err)
	}
}

// TestCheckpointsBeginDropsLaterTurns: a new turn at an index drops the
// checkpoints of turns at or after it (rewound, or compacted away).
func TestCheckpointsBeginDropsLaterTurns(t *testing.T) {
	sess, work := t.TempDir(), t.TempDir()
	p := filepath.Join(work, "f")
	var c Checkpoints
	for _, i := range []int{0, 2, 4} {
		c.Begin(sess, i, "p")
		if err := c.Before(p); err != nil {
			t.Fatal(err)
		}
		c.Edited(p)
		c.End()
	}
	c.Begin(sess, 2, "q")
	c.End()
	entries, _ := os.ReadDir(filepath.Join(sess, CheckpointsDir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "turn-0" {
		t.Fatalf("checkpoints %v, want turn-0", names)
	}
}

func TestRestoreBrokenManifest(t *testing.T) {
	sess := t.TempDir()
	dir := turnDir(sess, 0)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(sess, 0, "p"); err == nil || !strings.Contains(err.Error(), "manifest.json") {
		t.Fatalf("err %v", err)
	}
}
