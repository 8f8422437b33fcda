package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestUnpackAndExtendDefault(t *testing.T) {
	fsys := fstest.MapFS{
		"default/agent.yaml": {Data: []byte("version: 1\nagent:\n  name: base\n  system_prompt_path: ./system.md\n  tools: [\"echo:Echo\"]\n")},
		"default/system.md":  {Data: []byte("You are base.")},
	}
	cache := t.TempDir()
	dir, err := Unpack(fsys, cache)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Unpack(fsys, cache)
	if err != nil || again != dir {
		t.Fatalf("second unpack: %s, %v; want %s", again, err, dir)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d entries, want 1 (no temporary folder left)", len(entries))
	}
	fsys["default/system.md"] = &fstest.MapFile{Data: []byte("You are base, v2.")}
	if v2, err := Unpack(fsys, cache); err != nil || v2 == dir {
		t.Fatalf("changed tree unpacked to %s (%v), want a new folder", v2, err)
	}

	proj := t.TempDir()
	child := filepath.Join(proj, "agent.yaml")
	if err := os.WriteFile(child, []byte("version: 1\nagent:\n  extend: default\n  name: mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(child, LoadOptions{DefaultAgentPath: DefaultAgentFile(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mine" || s.SystemPromptPath != filepath.Join(dir, "default", "system.md") || len(s.Tools) != 1 {
		t.Fatalf("spec %+v", s)
	}
}

func TestUnpackUnwritableCache(t *testing.T) {
	// A regular file where the cache folder should be: no one can write there.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Unpack(fstest.MapFS{"default/agent.yaml": {Data: []byte("x")}}, filepath.Join(file, "cache"))
	if err == nil || !strings.HasPrefix(err.Error(), "built-in agents: ") {
		t.Fatalf("err %v", err)
	}
}
