package launcher

import (
	"bytes"
	"strings"
	"sync"
)

// tail keeps the last lines written to it: a plugin's stderr, quoted in
// errors.
type tail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
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

func (t *tail) add(line string) {
	line = strings.TrimRight(line, "\r")
	if len(line) > 500 {
		line = line[:500] + "..."
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(append([]string(nil), lines...), string(t.partial))
	}
	return strings.Join(lines, "\n")
}

// suffix is the last stderr line, for one-line error messages.
func (t *tail) suffix() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return " (stderr: " + s + ")"
}
