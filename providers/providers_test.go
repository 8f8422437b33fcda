package providers

import (
	"errors"
	"io"
	"testing"
)

func TestEventQueue(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		fills []func(q *EventQueue)
		want  []string // event texts, then the final error
		end   error
	}{
		{"events then EOF", []func(q *EventQueue){
			func(q *EventQueue) { q.Events = append(q.Events, Event{Text: "a"}, Event{Text: "b"}) },
			func(q *EventQueue) {}, // nothing decoded yet: fill again
			func(q *EventQueue) { q.Events = append(q.Events, Event{Text: "c"}); q.Finished = true },
		}, []string{"a", "b", "c"}, io.EOF},
		{"buffered events before the error", []func(q *EventQueue){
			func(q *EventQueue) { q.Events = append(q.Events, Event{Text: "a"}); q.Err = boom },
		}, []string{"a"}, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &EventQueue{}
			fill := func() {
				if len(tt.fills) == 0 {
					t.Fatal("fill called after the end")
				}
				tt.fills[0](q)
				tt.fills = tt.fills[1:]
			}
			var got []string
			for {
				ev, err := q.Pop(fill)
				if err != nil {
					if !errors.Is(err, tt.end) {
						t.Fatalf("end %v, want %v", err, tt.end)
					}
					break
				}
				got = append(got, ev.Text)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("events %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestParseDataURL(t *testing.T) {
	tests := []struct {
		url, media, data string
		ok               bool
	}{
		{"data:image/png;base64,aGk=", "image/png", "aGk=", true},
		{"data:image/png,raw", "", "", false},
		{"data:image/png;base64", "", "", false},
		{"https://example.com/a.png", "", "", false},
	}
	for _, tt := range tests {
		media, data, ok := ParseDataURL(tt.url)
		if ok != tt.ok || (ok && (media != tt.media || data != tt.data)) {
			t.Errorf("ParseDataURL(%q) = %q %q %v", tt.url, media, data, ok)
		}
	}
}
