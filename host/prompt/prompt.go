// Package prompt renders an agent's system prompt.
//
// The system prompt file is a template in the style of Kimi CLI (Python's
// string.Template): `${NAME}` is replaced by the value of argument NAME and
// `$$` is a literal `$`. Unlike Python, a `$` not followed by `{NAME}` or
// `$` (as in `$HOME` or `${HOME:-x}`) is kept as written, so shell snippets
// need no escaping; only the braced form substitutes. A `${NAME}` with no
// value is an error naming the file, the line and the variable.
//
// The arguments are the built-ins below, overridden by the agent spec's
// system_prompt_args:
//
//	KOSONG_NOW          the current local time, RFC 3339
//	KOSONG_WORK_DIR     the absolute work directory
//	KOSONG_WORK_DIR_LS  a short listing of the work directory
//	KOSONG_AGENTS_MD    the project's instructions (see FindAgentsMD), or ""
//	KOSONG_OS           the operating system (GOOS/GOARCH)
//	KOSONG_SHELL        the user's shell: "NAME (PATH)"
package prompt

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// The built-in argument names.
const (
	ArgNow       = "KOSONG_NOW"
	ArgWorkDir   = "KOSONG_WORK_DIR"
	ArgWorkDirLs = "KOSONG_WORK_DIR_LS"
	ArgAgentsMD  = "KOSONG_AGENTS_MD"
	ArgOS        = "KOSONG_OS"
	ArgShell     = "KOSONG_SHELL"
)

// MaxListing caps the entries of KOSONG_WORK_DIR_LS.
const MaxListing = 100

// MaxAgentsMD caps the bytes of the AGENTS.md files read together into
// KOSONG_AGENTS_MD (see FindAgentsMD).
const MaxAgentsMD = 64 << 10

// Options say where and when the prompt is rendered.
type Options struct {
	// WorkDir is the work directory; "" means the current directory.
	WorkDir string
	// Now returns the time; nil means time.Now.
	Now func() time.Time
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Error is an undefined variable in a system prompt file.
type Error struct {
	File string
	Line int
	Var  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: system prompt variable ${%s} is not defined (set it in system_prompt_args)", e.File, e.Line, e.Var)
}

// Render reads the system prompt file at path and substitutes the built-in
// arguments and args (args win).
func Render(path string, args map[string]string, opts Options) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("system prompt: %w", err)
	}
	vars, err := Builtins(opts)
	if err != nil {
		return "", err
	}
	for k, v := range args {
		vars[k] = v
	}
	return Expand(path, string(data), vars)
}

// Expand substitutes vars into text; file names text in errors.
func Expand(file, text string, vars map[string]string) (string, error) {
	var b strings.Builder
	b.Grow(len(text))
	line := 1
	for i := 0; i < len(text); {
		c := text[i]
		if c == '\n' {
			line++
		}
		if c != '$' || i+1 >= len(text) {
			b.WriteByte(c)
			i++
			continue
		}
		if text[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		if name, ok := braced(text[i+1:]); ok {
			v, defined := vars[name]
			if !defined {
				return "", &Error{File: file, Line: line, Var: name}
			}
			b.WriteString(v)
			i += len(name) + 3
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// braced returns NAME if s starts with {NAME} and NAME is an identifier.
func braced(s string) (string, bool) {
	if len(s) < 3 || s[0] != '{' {
		return "", false
	}
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return "", false
	}
	name := s[1:end]
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return "", false
		}
	}
	return name, true
}

// Builtins computes the built-in arguments.
func Builtins(opts Options) (map[string]string, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	dir := opts.WorkDir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("system prompt: work dir: %w", err)
	}
	ls, err := Listing(dir, MaxListing)
	if err != nil {
		return nil, fmt.Errorf("system prompt: listing the work dir: %w", err)
	}
	agentsMD, err := agentsMD(dir, opts.Getenv)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		ArgNow:       opts.Now().Format(time.RFC3339),
		ArgWorkDir:   dir,
		ArgWorkDirLs: ls,
		ArgAgentsMD:  agentsMD,
		ArgOS:        runtime.GOOS + "/" + runtime.GOARCH,
		ArgShell:     shell(opts.Getenv),
	}, nil
}

// Listing lists dir, one entry a line, sorted: directories end with "/",
// symlinks with "@", regular files show their size. At most limit entries
// are listed; a last line counts the rest.
func Listing(dir string, limit int) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var b strings.Builder
	for i, e := range entries {
		if i == limit {
			fmt.Fprintf(&b, "... and %d more\n", len(entries)-limit)
			break
		}
		switch t := e.Type(); {
		case t.IsDir():
			b.WriteString(e.Name() + "/\n")
		case t&fs.ModeSymlink != 0:
			b.WriteString(e.Name() + "@\n")
		default:
			size := ""
			if info, err := e.Info(); err == nil && t.IsRegular() {
				size = " (" + humanSize(info.Size()) + ")"
			}
			b.WriteString(e.Name() + size + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

func readCapped(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	return string(data), err
}

func shell(getenv func(string) string) string {
	if runtime.GOOS == "windows" {
		return "powershell (powershell.exe)"
	}
	p := getenv("SHELL")
	if p == "" {
		p = "/bin/sh"
	}
	return filepath.Base(p) + " (" + p + ")"
}
