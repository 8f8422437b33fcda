package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B_2": "beta", "EMPTY": ""}
	tests := []struct {
		name, in, want string
	}{
		{"plain", "no variables", "no variables"},
		{"braced", "x ${A} y ${B_2}", "x alpha y beta"},
		{"adjacent", "${A}${B_2}", "alphabeta"},
		{"empty value", "[${EMPTY}]", "[]"},
		{"dollar escape", "costs $$5, ${A}", "costs $5, alpha"},
		{"escaped braces", "$${A}", "${A}"},
		{"bare dollar kept", "echo $HOME and $1 and $", "echo $HOME and $1 and $"},
		{"shell default kept", "${HOME:-x} ${ A } ${} ${1A}", "${HOME:-x} ${ A } ${} ${1A}"},
		{"unicode", "héllo ${A} ✓", "héllo alpha ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand("f.md", tt.in, vars)
			if err != nil || got != tt.want {
				t.Fatalf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestMissingVariable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "system.md")
	if err := os.WriteFile(path, []byte("line one\nline ${A}\nuse ${NOPE} here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Render(path, map[string]string{"A": "two"}, Options{WorkDir: dir})
	var pe *Error
	if !errors.As(err, &pe) || pe.Var != "NOPE" || pe.Line != 3 || pe.File != path {
		t.Fatalf("err %#v", err)
	}
	want := path + ":3: system prompt variable ${NOPE} is not defined (set it in system_prompt_args)"
	if err.Error() != want || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error text\n got %q\nwant %q", err.Error(), want)
	}
}

func TestRenderBuiltins(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"AGENTS.md": "  Be nice.\n", "b.txt": "12345", "a.go": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := map[string]string{"SHELL": "/usr/bin/zsh"}
	opts := Options{WorkDir: dir, Now: func() time.Time { return now }, Getenv: func(k string) string { return env[k] }}

	shell := "zsh (/usr/bin/zsh)"
	if runtime.GOOS == "windows" {
		shell = "powershell (powershell.exe)"
	}
	tests := []struct {
		tmpl string
		args map[string]string
		want string
	}{
		{"${KOSONG_NOW}", nil, "2026-01-02T03:04:05Z"},
		{"${KOSONG_WORK_DIR}", nil, dir},
		{"${KOSONG_WORK_DIR_LS}", nil, "AGENTS.md (11 B)\na.go (0 B)\nb.txt (5 B)\nsub/"},
		{"${KOSONG_AGENTS_MD}", nil, "<!-- " + filepath.Join(dir, "AGENTS.md") + " -->\nBe nice."},
		{"${KOSONG_OS}", nil, runtime.GOOS + "/" + runtime.GOARCH},
		{"${KOSONG_SHELL}", nil, shell},
		{"${ROLE} at ${KOSONG_WORK_DIR}", map[string]string{"ROLE": "coder"}, "coder at " + dir},
		{"${KOSONG_OS}", map[string]string{"KOSONG_OS": "override"}, "override"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "system.md")
			if err := os.WriteFile(path, []byte(tt.tmpl), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Render(path, tt.args, opts)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestBuiltinsWithoutAgentsMD(t *testing.T) {
	vars, err := Builtins(Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := vars[ArgAgentsMD]; !ok || v != "" {
		t.Fatalf("KOSONG_AGENTS_MD = %q, %v", v, ok)
	}
	if v := vars[ArgWorkDirLs]; v != "" {
		t.Fatalf("listing of an empty dir: %q", v)
	}
}

func TestListingLimit(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Listing(dir, 2)
	if err != nil || got != "a (0 B)\nb (0 B)\n... and 2 more" {
		t.Fatalf("%q %v", got, err)
	}
}
