package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func sumOf(data string) string {
	s := sha256.Sum256([]byte(data))
	return hex.EncodeToString(s[:])
}

// resetHashes empties the hash cache and points it at dir for the test.
func resetHashes(t *testing.T, dir string, fresh time.Duration) {
	t.Helper()
	old := freshFor
	freshFor = fresh
	hashes.mu.Lock()
	hashes.mem, hashes.dir = map[string]string{}, dir
	hashes.mu.Unlock()
	t.Cleanup(func() {
		freshFor = old
		hashes.mu.Lock()
		hashes.mem, hashes.dir = map[string]string{}, ""
		hashes.mu.Unlock()
	})
}

func write(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestFileSHA256OncePerContent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the identity of a file is read on Linux only")
	}
	mtime := time.Now().Add(-time.Hour)
	tests := []struct {
		name string
		// change is what happens to the file after it was hashed once.
		change func(t *testing.T, path string)
		want   string
	}{
		{"unchanged: the record answers", func(*testing.T, string) {}, "aaaa"},
		{"rewritten in place, same size and mtime", func(t *testing.T, path string) { write(t, path, "bbbb", mtime) }, "bbbb"},
		{"replaced by rename, same size and mtime", func(t *testing.T, path string) {
			other := path + ".new"
			write(t, other, "cccc", mtime)
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}, "cccc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			resetHashes(t, cache, 0)
			path := filepath.Join(t.TempDir(), "plugin")
			write(t, path, "aaaa", mtime)
			if got, err := FileSHA256(path); err != nil || got != sumOf("aaaa") {
				t.Fatalf("first hash: %s %v", got, err)
			}
			recs, _ := filepath.Glob(filepath.Join(cache, "*"))
			if len(recs) != 1 {
				t.Fatalf("records on disk: %v", recs)
			}
			tt.change(t, path)
			// A new process: nothing in memory, the record on disk.
			hashes.mu.Lock()
			hashes.mem = map[string]string{}
			hashes.mu.Unlock()
			if got, err := FileSHA256(path); err != nil || got != sumOf(tt.want) {
				t.Fatalf("after the change: %s %v, want the sha256 of %q", got, err, tt.want)
			}
		})
	}
}

func TestFileSHA256IgnoresBadRecords(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the identity of a file is read on Linux only")
	}
	cache := t.TempDir()
	resetHashes(t, cache, 0)
	path := filepath.Join(t.TempDir(), "plugin")
	write(t, path, "aaaa", time.Now().Add(-time.Hour))
	if _, err := FileSHA256(path); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(cache, "*"))
	if len(recs) != 1 {
		t.Fatalf("records on disk: %v", recs)
	}
	for _, bad := range []string{"", "garbage", strings.Repeat("Z", 64), strings.Repeat("a", 63)} {
		if err := os.WriteFile(recs[0], []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		hashes.mu.Lock()
		hashes.mem = map[string]string{}
		hashes.mu.Unlock()
		if got, err := FileSHA256(path); err != nil || got != sumOf("aaaa") {
			t.Fatalf("record %q: %s %v", bad, got, err)
		}
	}
}

func TestFileSHA256FreshFileNotRecorded(t *testing.T) {
	cache := t.TempDir()
	resetHashes(t, cache, time.Hour)
	path := filepath.Join(t.TempDir(), "plugin")
	write(t, path, "aaaa", time.Now().Add(-time.Hour)) // its change time is now
	if got, err := FileSHA256(path); err != nil || got != sumOf("aaaa") {
		t.Fatalf("hash: %s %v", got, err)
	}
	recs, _ := filepath.Glob(filepath.Join(cache, "*"))
	hashes.mu.Lock()
	n := len(hashes.mem)
	hashes.mu.Unlock()
	if len(recs) != 0 || n != 0 {
		t.Fatalf("a file changed %s ago was recorded: %v, %d in memory", "just", recs, n)
	}
	if _, err := FileSHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file hashed")
	}
}
