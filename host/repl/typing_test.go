package repl

import (
	"slices"
	"strings"
	"testing"
)

// TestTyping: the keys typed while a turn runs edit the input line; Enter
// queues it, Ctrl-S steers it (queued when the turn no longer takes it),
// Esc on its own and Ctrl-C interrupt, escape sequences and an Escape
// that starts one do not, a paste is inserted with its newlines, Ctrl-O
// shows the last tool output.
func TestTyping(t *testing.T) {
	tests := []struct {
		name       string
		reads      []string // one read each; "IDLE" is a pause
		steerOK    bool
		wantQueued []string
		wantText   string
		wantSteer  []string
		wantIntr   int
		wantEOF    int
		wantBack   []string // queued before the interrupt
		wantLast   int      // Ctrl-O pressed
	}{
		{name: "typing and Enter", reads: []string{"hel", "lo\r", "next"}, wantQueued: []string{"hello"}, wantText: "next"},
		{name: "backspace and Ctrl-U", reads: []string{"abc\x7f\x7fX", "\x15yz"}, wantText: "yz"},
		{name: "Ctrl-J adds a line", reads: []string{"one\ntwo"}, wantText: "one\ntwo"},
		{name: "Ctrl-S steers", reads: []string{"also this\x13", "more"}, steerOK: true, wantSteer: []string{"also this"}, wantText: "more"},
		{name: "Ctrl-S after the turn queues", reads: []string{"late\x13"}, wantSteer: []string{"late"}, wantQueued: []string{"late"}},
		{name: "Enter on an empty line does nothing", reads: []string{"\r\r"}},
		{name: "Esc alone interrupts", reads: []string{"ab", "\x1b", "IDLE"}, wantText: "ab", wantIntr: 1},
		{name: "Ctrl-C interrupts", reads: []string{"\x03"}, wantIntr: 1},
		{name: "lines queued before and after Esc", reads: []string{"before\r", "\x1b", "IDLE", "after\r"},
			wantIntr: 1, wantBack: []string{"before"}, wantQueued: []string{"after"}},
		{name: "Ctrl-D on an empty line", reads: []string{"\x04", "x\x04"}, wantText: "x", wantEOF: 1},
		{name: "arrows do not interrupt", reads: []string{"a\x1b[A\x1b[D", "IDLE", "\x1bOB", "IDLE"}, wantText: "a"},
		{name: "a sequence cut between reads", reads: []string{"a\x1b", "[C", "IDLE", "b"}, wantText: "ab"},
		{name: "paste with line ends", reads: []string{"\x1b[200~one\rtwo", "\x1b[201~", "IDLE"}, wantText: "one\ntwo"},
		{name: "paste markers cut between reads", reads: []string{"\x1b[20", "0~x\x1b[2", "01~y"}, wantText: "xy"},
		{name: "Tab completes the one completion", reads: []string{"/revi\t", " main.go"}, wantText: "/review main.go"},
		{name: "Tab completes the last word", reads: []string{"look at @ma\t"}, wantText: "look at @main.go"},
		{name: "Tab with several completions does nothing", reads: []string{"/re\t"}, wantText: "/re"},
		{name: "Ctrl-O shows the last output and leaves the line", reads: []string{"ab\x0f", "c"}, wantText: "abc", wantLast: 1},
		{name: "UTF-8 cut between reads", reads: []string{"\xc3", "\xa9t\xc3\xa9"}, wantText: "\u00e9t\u00e9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var steered []string
			interrupts, eofs, lasts := 0, 0, 0
			ty := newTyping(typingHandlers{
				complete: func(line string) []string {
					var out []string
					word := line[strings.LastIndexAny(line, " ")+1:]
					for _, c := range []string{"/review", "/rewind", "@main.go"} {
						if strings.HasPrefix(c, word) {
							out = append(out, c)
						}
					}
					return out
				},
				eof:       func() { eofs++ },
				showLast:  func() { lasts++ },
				interrupt: func() { interrupts++ },
				steer: func(s string) bool {
					steered = append(steered, s)
					return tt.steerOK
				},
			})
			for _, r := range tt.reads {
				if r == "IDLE" {
					ty.idle()
					continue
				}
				ty.feed([]byte(r))
			}
			if tt.wantBack != nil {
				if back := ty.takeQueuedBeforeInterrupt(); !slices.Equal(back, tt.wantBack) {
					t.Errorf("queued before the interrupt %q, want %q", back, tt.wantBack)
				}
			}
			queued, text := ty.result()
			if !slices.Equal(queued, tt.wantQueued) || text != tt.wantText {
				t.Errorf("queued %q, text %q; want %q, %q", queued, text, tt.wantQueued, tt.wantText)
			}
			if !slices.Equal(steered, tt.wantSteer) || interrupts != tt.wantIntr || eofs != tt.wantEOF {
				t.Errorf("steered %q, %d interrupts, %d Ctrl-D; want %q, %d, %d", steered, interrupts, eofs, tt.wantSteer, tt.wantIntr, tt.wantEOF)
			}
			if lasts != tt.wantLast {
				t.Errorf("Ctrl-O shown %d times, want %d", lasts, tt.wantLast)
			}
		})
	}
}

// TestRowsFor: the rows made below the prompt: three, more for a long or
// multi-line draft, never the whole screen.
func TestRowsFor(t *testing.T) {
	tests := []struct {
		draft         string
		width, height int
		want          int
	}{
		{"", 80, 24, 3},
		{"short", 80, 24, 3},
		{strings.Repeat("w", 200), 80, 24, 4},
		{"a\nb\nc\nd\ne", 80, 24, 6},
		{strings.Repeat("line\n", 40), 80, 24, 23},
		{"x", 0, 0, 3},
	}
	for _, tt := range tests {
		if got := rowsFor("> ", tt.draft, tt.width, tt.height); got != tt.want {
			t.Errorf("rowsFor(%q, %d, %d) = %d, want %d", tt.draft, tt.width, tt.height, got, tt.want)
		}
	}
}
