package declcache

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	d := &Dir{Path: filepath.Join(t.TempDir(), "decl")}
	key := Key("plugin", 1, []string{"a"})
	if len(key) != 64 || key != Key("plugin", 1, []string{"a"}) || key == Key("plugin", 2, []string{"a"}) {
		t.Fatalf("keys: %q", key)
	}
	if _, ok := d.Get(key); ok {
		t.Fatal("a record before any Put")
	}
	if err := d.Put(key, []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if got, ok := d.Get(key); !ok || string(got) != `{"v":1}` {
		t.Fatalf("get: %q %v", got, ok)
	}
	d.Drop(key)
	if _, ok := d.Get(key); ok {
		t.Fatal("a record after Drop")
	}
}

func TestDirRefuses(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	key := Key("x")
	tests := []struct {
		name string
		key  string
		data []byte
		err  string
	}{
		{"no key", "", []byte("{}"), "invalid key"},
		{"a key that is a path", "../../../../etc/passwd", []byte("{}"), "invalid key"},
		{"a key that is not hex", strings.Repeat("z", 64), []byte("{}"), "invalid key"},
		{"too big", key, make([]byte, MaxRecordBytes+1), "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Put(tt.key, tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("Put: %v, want %q", err, tt.err)
			}
			if _, ok := d.Get(tt.key); ok {
				t.Fatal("Get found a record")
			}
		})
	}
	if err := (&Dir{}).Put(key, nil); err == nil {
		t.Fatal("Put with no folder")
	}
}

func TestDirIgnoresOversizedRecord(t *testing.T) {
	d := &Dir{Path: t.TempDir()}
	key := Key("big")
	path, _ := d.file(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, MaxRecordBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get(key); ok {
		t.Fatal("an oversized record was read")
	}
}

func TestDefaultFolder(t *testing.T) {
	own := t.TempDir()
	t.Setenv(CacheDirEnv, own)
	if d, err := Default(); err != nil || d.Path != filepath.Join(own, "declarations") {
		t.Fatalf("with %s: %v %v", CacheDirEnv, d, err)
	}
	t.Setenv(CacheDirEnv, "relative/dir")
	if _, err := Default(); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Fatalf("a relative %s: %v", CacheDirEnv, err)
	}
	t.Setenv(CacheDirEnv, "")
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", t.TempDir())
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	// os.UserCacheDir reads XDG_CACHE_HOME on Unix but macOS.
	if want := filepath.Join(dir, "kosong-host", "declarations"); d.Path != want && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Fatalf("Default: %s, want %s", d.Path, want)
	}
}
