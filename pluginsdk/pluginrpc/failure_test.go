package pluginrpc

import (
	"errors"
	"testing"
)

func TestFailureLine(t *testing.T) {
	tests := []struct {
		name, what string
		err        error
		line       string
	}{
		{"one reason", FailedToDeclare, errors.New("tool Echo: bad tag"),
			"kosong-plugin: failed to declare its tools: tool Echo: bad tag"},
		{"several reasons on one line", FailedToDeclare, errors.Join(errors.New("tool A: x"), errors.New("tool B: y")),
			"kosong-plugin: failed to declare its tools: tool A: x; tool B: y"},
		{"start", FailedToStart, errors.New("TLS: no material"), "kosong-plugin: failed to start: TLS: no material"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := FailureLine(tt.what, tt.err)
			if line != tt.line {
				t.Fatalf("line %q, want %q", line, tt.line)
			}
			stderr := `{"@level":"debug","@message":"starting"}` + "\n" + line + "\n"
			if got, ok := FindFailure(stderr); !ok || "kosong-plugin: "+got != tt.line {
				t.Fatalf("FindFailure = %q, %v", got, ok)
			}
		})
	}
	for _, stderr := range []string{"", "usage: true", "kosong-plugin:", "some kosong-plugin: text"} {
		if got, ok := FindFailure(stderr); ok {
			t.Errorf("FindFailure(%q) = %q, want none", stderr, got)
		}
	}
}
