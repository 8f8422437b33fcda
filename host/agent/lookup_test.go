package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	write := func(t *testing.T, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("version: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		files    []string // relative to the work dir; "CFG/..." in the config dir
		explicit string
		want     string // "" = built-in
		wantErr  string
	}{
		{name: "nothing: built-in default"},
		{name: "project folder first", files: []string{".kosong/agent.yaml", "agent.yaml", "CFG/kosong-host/agent.yaml"}, want: ".kosong/agent.yaml"},
		{name: "agent.yaml second", files: []string{"agent.yaml", "CFG/kosong-host/agent.yaml"}, want: "agent.yaml"},
		{name: "user config third", files: []string{"CFG/kosong-host/agent.yaml"}, want: "CFG/kosong-host/agent.yaml"},
		{name: "explicit wins", files: []string{"agent.yaml", "mine.yaml"}, explicit: "mine.yaml", want: "mine.yaml"},
		{name: "explicit missing names the order", files: []string{"agent.yaml"}, explicit: "nope.yaml",
			wantErr: "Agent spec file not found: nope.yaml (given with --agent; without --agent kosong-host uses the first of ./.kosong/agent.yaml, ./agent.yaml, CFG/kosong-host/agent.yaml, the built-in default agent)"},
		{name: "explicit folder", files: []string{"d/x"}, explicit: "d", wantErr: "Agent spec path is not a file: d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wd, cfg := t.TempDir(), t.TempDir()
			getenv := func(k string) string {
				if k == "XDG_CONFIG_HOME" {
					return cfg
				}
				return ""
			}
			for _, f := range tt.files {
				if rest, ok := strings.CutPrefix(f, "CFG/"); ok {
					write(t, filepath.Join(cfg, rest))
				} else {
					write(t, filepath.Join(wd, f))
				}
			}
			t.Chdir(wd)
			src, err := Find(tt.explicit, wd, "/builtin/agent.yaml", getenv)
			if tt.wantErr != "" {
				if err == nil || strings.ReplaceAll(err.Error(), cfg, "CFG") != tt.wantErr {
					t.Fatalf("err %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(src.Path, cfg, "CFG")
			if tt.want == "" {
				if !src.Builtin || src.String() != "built-in default" || got != "/builtin/agent.yaml" {
					t.Fatalf("got %+v, want the built-in default", src)
				}
				return
			}
			if src.Builtin || filepath.ToSlash(got) != tt.want || src.String() != src.Path || src.Explicit != (tt.explicit != "") {
				t.Fatalf("got %+v, want %s", src, tt.want)
			}
		})
	}
}

func TestFindWithoutBuiltin(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Find("", ".", "", func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "the built-in default agent is not available") {
		t.Fatalf("err %v", err)
	}
}
