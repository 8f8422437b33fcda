package session

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

func TestRoot(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}, "/state/kosong-host/sessions"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/state/kosong-host/sessions"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/kosong-host/sessions"},
	}
	for _, tt := range tests {
		got, err := Root(func(k string) string { return tt.env[k] })
		if err != nil || got != filepath.FromSlash(tt.want) {
			t.Errorf("Root(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestNewAndHistory(t *testing.T) {
	state := t.TempDir()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local)
	s, err := New(Options{Getenv: func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^20260102-150405-[0-9a-f]{6}$`).MatchString(s.ID) {
		t.Fatalf("id %q", s.ID)
	}
	if s.Dir != filepath.Join(state, "kosong-host", "sessions", s.ID) {
		t.Fatalf("dir %q", s.Dir)
	}
	if fi, err := os.Stat(s.Dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir: %v %v", fi, err)
	}
	if other := NewID(now); other == s.ID {
		t.Fatalf("two ids alike: %s", other)
	}

	h := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi\nthere")}},
		{Role: providers.RoleAssistant, Reasoning: "r", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: `{"command":"ls"}`}}},
		{Role: providers.RoleTool, ToolCallID: "c1", Content: []providers.ContentPart{providers.TextPart("out")}},
	}
	for _, upto := range []int{1, 3} { // saved after each turn: the file is replaced
		if err := s.SaveHistory(h[:upto]); err != nil {
			t.Fatal(err)
		}
		got, err := LoadHistory(s.HistoryPath())
		if err != nil || !reflect.DeepEqual(got, h[:upto]) {
			t.Fatalf("loaded %+v, %v", got, err)
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Fatalf("left-over files: %v", entries)
	}
}

func TestOpen(t *testing.T) {
	root := t.TempDir()
	at := func(s string) func() time.Time {
		return func() time.Time { tm, _ := time.Parse("20060102-150405", s); return tm }
	}
	old, err := New(Options{Root: root, Now: at("20260101-120000")})
	if err != nil {
		t.Fatal(err)
	}
	newest, err := New(Options{Root: root, Now: at("20260102-120000")})
	if err != nil {
		t.Fatal(err)
	}
	saved := []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}
	if err := old.SaveHistory(saved); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, wantID string
		history    int
		err        string
	}{
		{old.ID, old.ID, 1, ""},
		{Last, newest.ID, 0, ""},
		{"20990101-000000-abcdef", "", 0, "session: no session 20990101-000000-abcdef in " + root},
		{"../etc", "", 0, `session: "../etc" is not a session id`},
	}
	for _, tt := range tests {
		s, h, err := Open(Options{Root: root}, tt.id)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("Open(%q) err = %v, want %q", tt.id, err, tt.err)
			}
		case err != nil || s.ID != tt.wantID || len(h) != tt.history:
			t.Errorf("Open(%q) = %v, %d messages, %v", tt.id, s, len(h), err)
		}
	}
	if _, _, err := Open(Options{Root: t.TempDir()}, Last); err == nil || !strings.Contains(err.Error(), "there is no session to resume") {
		t.Errorf("Open(last) with no session: %v", err)
	}
}
