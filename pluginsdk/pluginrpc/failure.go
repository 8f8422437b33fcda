package pluginrpc

import (
	"strings"
)

// A kosong plugin that cannot serve says why in one line on stderr, then
// exits non-zero without printing the handshake:
//
//	kosong-plugin: failed to declare its tools: tool Echo: ...
//	kosong-plugin: failed to start: ...
//
// The host reads a plugin's stderr; when a plugin exits before the
// handshake, the line tells a kosong plugin that failed (whose reason the
// host quotes) from a program that is not a kosong plugin at all.
// pluginsdk.Serve writes it; a plugin in another language may too.
const failurePrefix = "kosong-plugin: "

// What a plugin failed to do, in its failure line.
const (
	// FailedToDeclare: the plugin's tools are declared wrongly (a bad tag,
	// a constructor of the wrong shape); no tool can be described.
	FailedToDeclare = "failed to declare its tools"
	// FailedToStart: anything else that keeps the plugin from serving (the
	// TLS material, its arguments).
	FailedToStart = "failed to start"
)

// FailureLine is the stderr line of a plugin that failed to do what
// (FailedToDeclare or FailedToStart) because of err; a reason of several
// lines is joined with "; ".
func FailureLine(what string, err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return failurePrefix + what + ": " + strings.Join(parts, "; ")
}

// FindFailure returns what the last failure line in a plugin's stderr
// says ("failed to declare its tools: REASON"); ok is false when there is
// none.
func FindFailure(stderr string) (failure string, ok bool) {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, found := strings.CutPrefix(strings.TrimSpace(lines[i]), failurePrefix); found && rest != "" {
			return rest, true
		}
	}
	return "", false
}
