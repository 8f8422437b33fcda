package providers

import "io"

// EventQueue buffers the events a stream decodes ahead of Next. A provider
// stream embeds it, appends to Events, sets Err on failure or Finished at
// the end, and implements Next with Pop.
type EventQueue struct {
	Events   []Event
	Err      error
	Finished bool
}

// Pop returns the next buffered event, calling fill to decode more while
// none is buffered and the stream has neither failed nor finished; then it
// returns Err, or io.EOF.
func (q *EventQueue) Pop(fill func()) (Event, error) {
	for len(q.Events) == 0 {
		if q.Err != nil {
			return Event{}, q.Err
		}
		if q.Finished {
			return Event{}, io.EOF
		}
		fill()
	}
	ev := q.Events[0]
	q.Events = q.Events[1:]
	return ev, nil
}
