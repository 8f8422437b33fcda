package proc

import (
	"slices"
	"testing"
)

func TestEnvIsAnAllowList(t *testing.T) {
	host := map[string]string{"PATH": "/bin", "HOME": "/root", "OPENAI_API_KEY": "sk-secret", "KIMI_API_KEY": "sk-kimi", "SEARCH_KEY": "s"}
	got := Env(func(k string) string { return host[k] }, "SEARCH_KEY", "PATH")
	want := []string{"PATH=/bin", "HOME=/root", "SEARCH_KEY=s"}
	if !slices.Equal(got, want) {
		t.Fatalf("env = %v, want %v", got, want)
	}
}

func TestTail(t *testing.T) {
	tl := NewTail(2)
	tl.Write([]byte("one\ntwo\nthr"))
	tl.Write([]byte("ee\nfour"))
	if got := tl.String(); got != "two\nthree\nfour" {
		t.Fatalf("tail = %q", got)
	}
	if got := tl.Suffix(); got != " (stderr: four)" {
		t.Fatalf("suffix = %q", got)
	}
	if got := tl.Last(2); got != "three | four" {
		t.Fatalf("last = %q", got)
	}
	if got := NewTail(2).Suffix(); got != "" {
		t.Fatalf("empty suffix = %q", got)
	}
}
