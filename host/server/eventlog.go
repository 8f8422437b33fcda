package server

import (
	"bytes"
	"sync"

	"github.com/kosong-host/kosong-host/host/streamjson"
)

// DefaultLogEvents is how many events a session's log keeps in memory
// for clients that reconnect.
const DefaultLogEvents = 20000

// logged is one event of a session's log.
type logged struct {
	seq  int64
	data []byte // one JSON object, no newline
}

// eventLog is a session's bounded event log: each event gets the next
// sequence number; readers wait on changed for more.
type eventLog struct {
	mu      sync.Mutex
	events  []logged
	next    int64 // the sequence number of the next event
	max     int
	changed chan struct{}
	closed  bool
	buf     bytes.Buffer
	w       *streamjson.Writer
}

// newEventLog starts a log whose first event is numbered first.
func newEventLog(first int64, max int) *eventLog {
	if max <= 0 {
		max = DefaultLogEvents
	}
	l := &eventLog{next: first, max: max, changed: make(chan struct{})}
	l.w = streamjson.NewWriter(&l.buf)
	return l
}

// add appends v (a JSON-able event with a "type") and returns its
// sequence number; 0 once the log is closed.
func (l *eventLog) add(v any) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0
	}
	l.buf.Reset()
	// The stream-json writer bounds the line as run's stream-json does.
	if err := l.w.Write(v); err != nil {
		return 0
	}
	data := bytes.TrimRight(l.buf.Bytes(), "\n")
	seq := l.next
	l.next++
	l.events = append(l.events, logged{seq: seq, data: bytes.Clone(data)})
	if len(l.events) > l.max {
		drop := len(l.events) - l.max
		copy(l.events, l.events[drop:])
		clear(l.events[len(l.events)-drop:])
		l.events = l.events[:len(l.events)-drop]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return seq
}

// last is the sequence number of the newest event (first-1 when none).
func (l *eventLog) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next - 1
}

// since returns the events after seq, the oldest sequence number the log
// holds (lost: seq is older than it and events in between are gone), a
// channel closed when more come, and whether the log is closed.
func (l *eventLog) since(after int64) (evs []logged, oldest int64, changed <-chan struct{}, closed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	oldest = l.next
	if len(l.events) > 0 {
		oldest = l.events[0].seq
	}
	// Events are numbered in order without gaps: index by arithmetic.
	i := 0
	if after >= oldest {
		i = int(after - oldest + 1)
	}
	if i < len(l.events) {
		evs = append(evs, l.events[i:]...)
	}
	return evs, oldest, l.changed, l.closed
}

// close ends the log: readers see closed once they have read it all.
func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.changed)
	}
}
