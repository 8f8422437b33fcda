package mcpclient

import (
	"bytes"
	"strings"
	"sync"
)

// tail keeps the last lines a stdio server wrote to stderr, quoted in errors.
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

// last returns the last n lines joined with " | ".
func (t *tail) last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if p := strings.TrimSpace(string(t.partial)); p != "" {
		lines = append(append([]string(nil), lines...), p)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
