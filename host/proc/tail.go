package proc

import (
	"bytes"
	"strings"
	"sync"
)

// Tail keeps the last lines written to it: a plugin's or an MCP server's
// stderr, quoted in errors. Blank lines are dropped.
type Tail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

// NewTail keeps the last max lines.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps the complete lines of p.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := append(t.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		t.add(string(data[:i]))
		data = data[i+1:]
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	t.partial = append([]byte(nil), data...)
	return len(p), nil
}

func (t *Tail) add(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	if len(line) > 500 {
		line = line[:500] + "..."
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// Last returns the last n lines joined with " | ", on one line.
func (t *Tail) Last(n int) string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// String returns the lines kept, the unfinished last one included.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(append([]string(nil), lines...), string(t.partial))
	}
	return strings.Join(lines, "\n")
}

// Suffix is the last line kept, as " (stderr: LINE)", for one-line error
// messages; "" when nothing was written.
func (t *Tail) Suffix() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return " (stderr: " + s + ")"
}
