package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

func msg(role providers.Role, text string) providers.Message {
	return providers.Message{Role: role, Content: []providers.ContentPart{providers.TextPart(text)}}
}

func TestListPerWorkDir(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	mk := func(workDir, prompt string, updated time.Time) *Session {
		t.Helper()
		s, err := New(Options{Root: root, Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WriteMeta(Meta{WorkDir: workDir, Agent: "kosong", Created: at}); err != nil {
			t.Fatal(err)
		}
		if prompt != "" {
			if err := s.SaveHistory([]providers.Message{msg(providers.RoleUser, prompt), msg(providers.RoleAssistant, "ok")}); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(s.HistoryPath(), updated, updated); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	a1 := mk("/a", "first in a", at.Add(time.Hour))
	a2 := mk("/a", "second in a", at.Add(2*time.Hour))
	b := mk("/b", "in b", at.Add(3*time.Hour))
	empty := mk("/a", "", time.Time{})
	// A session from before session.json: listed with --all only.
	old := filepath.Join(root, "20250101-000000-000000")
	if err := os.Mkdir(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old, at.AddDate(-1, 0, 0), at.AddDate(-1, 0, 0)); err != nil {
		t.Fatal(err)
	}

	list, err := List(Options{Root: root}, "/a")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID+"="+s.FirstPrompt)
	}
	want := []string{a2.ID + "=second in a", a1.ID + "=first in a", empty.ID + "="}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("list of /a: %v, want %v", ids, want)
	}
	all, err := List(Options{Root: root}, "")
	if err != nil || len(all) != 5 || all[0].ID != b.ID || all[4].ID != filepath.Base(old) || all[0].WorkDir != "/b" || all[0].Agent != "kosong" {
		t.Fatalf("list --all: %+v, %v", all, err)
	}
	latest, err := Latest(Options{Root: root}, "/a")
	if err != nil || latest.ID != a2.ID {
		t.Fatalf("latest of /a: %+v, %v", latest, err)
	}
	if _, err := Latest(Options{Root: root}, "/c"); err == nil || !strings.Contains(err.Error(), "there is no session of /c to continue") {
		t.Fatalf("latest of /c: %v", err)
	}
	if got, err := List(Options{Root: filepath.Join(root, "missing")}, ""); err != nil || len(got) != 0 {
		t.Fatalf("no root: %v, %v", got, err)
	}
}

// TestFirstPromptSkipsNotes: the listed first prompt is what the user
// typed, never the compaction's summary or an interruption note, and
// without the files attached to it.
func TestFirstPromptSkipsNotes(t *testing.T) {
	summary := msg(providers.RoleUser, "<system>The earlier part of this conversation was compacted. Summary:</system>\nwe fixed x")
	interrupted := msg(providers.RoleUser, "<system>The user interrupted you</system>")
	attached := providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{
		providers.TextPart("explain @a.go"), providers.TextPart("<file path=\"a.go\">package a</file>")}}
	tests := []struct {
		name    string
		history []providers.Message
		want    string
	}{
		{"compacted", []providers.Message{summary, msg(providers.RoleAssistant, "ok"), msg(providers.RoleUser, "next step")}, "next step"},
		{"only notes", []providers.Message{summary, interrupted}, ""},
		{"attachment", []providers.Message{attached}, "explain @a.go"},
		{"image first", []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{{Type: providers.PartImage, ImageURL: "data:image/png;base64,AA=="}}}, msg(providers.RoleUser, "typed")}, "typed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Options{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveHistory(tt.history); err != nil {
				t.Fatal(err)
			}
			if got := firstPrompt(s.HistoryPath()); got != tt.want {
				t.Fatalf("first prompt %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadMetaBroken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMeta(dir); err == nil || !strings.Contains(err.Error(), MetaFile) {
		t.Fatalf("err %v", err)
	}
}

func TestLastExchange(t *testing.T) {
	tool := providers.Message{Role: providers.RoleTool, ToolCallID: "c1", Content: []providers.ContentPart{providers.TextPart("out")}}
	tests := []struct {
		name         string
		history      []providers.Message
		user, answer string
	}{
		{"empty", nil, "", ""},
		{"one turn", []providers.Message{msg(providers.RoleUser, "q1"), msg(providers.RoleAssistant, "a1")}, "q1", "a1"},
		{"last of two, with tools", []providers.Message{msg(providers.RoleUser, "q1"), msg(providers.RoleAssistant, "a1"),
			msg(providers.RoleUser, "q2"), msg(providers.RoleAssistant, "looking"), tool, msg(providers.RoleAssistant, "found")}, "q2", "looking\nfound"},
		{"unanswered", []providers.Message{msg(providers.RoleUser, "q1")}, "q1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, a := LastExchange(tt.history)
			if u != tt.user || a != tt.answer {
				t.Fatalf("got %q, %q; want %q, %q", u, a, tt.user, tt.answer)
			}
		})
	}
}
