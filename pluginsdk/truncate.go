package pluginsdk

import (
	"strings"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
)

// The output caps the SDK applies to every tool result before it goes on the
// wire, so that no tool can flood the model's context. They are the host's
// (see package limits): the host applies the same caps to what any plugin
// sends.
const (
	// MaxOutputChars caps a result's text output, all parts together.
	MaxOutputChars = limits.ResultChars
	// MaxOutputLineChars caps each line of a result's text output.
	MaxOutputLineChars = limits.ResultLineChars
	// TruncatedMarker marks where text was cut.
	TruncatedMarker = limits.TruncatedMarker
)

var markerRunes = utf8.RuneCountInString(TruncatedMarker)

// TruncateText caps s to maxChars characters in all and maxLine characters a
// line, counting runes (never splitting a multi-byte character). A cut line
// or a cut end is marked with TruncatedMarker; markers and line breaks count
// towards the caps, so the result never exceeds them. It reports whether
// anything was cut. Invalid UTF-8 is replaced with U+FFFD first.
func TruncateText(s string, maxChars, maxLine int) (string, bool) {
	out, cut, _ := limits.Truncate(s, maxChars, maxLine, false)
	return out, cut
}

func partText(p Part) (string, bool)    { return p.Text, !p.IsImage() }
func withText(_ Part, text string) Part { return Part{Text: text} }

// capOutput applies the output caps to r's text parts (all of them sharing
// one budget) and makes every string of r valid UTF-8. When anything is cut, the full text is saved as
// outputs/<tool call id>.txt under stateDir (when there is one) and the
// message says so, naming the file. Images pass through untouched.
func capOutput(r Result, toolCallID, stateDir string) Result {
	orig := r.Output
	parts, cut := limits.CutOutput(r.Output, partText, withText)
	r.Output = parts
	// The wire carries strings as protobuf strings, which must be UTF-8.
	r.Message = strings.ToValidUTF8(r.Message, "\uFFFD")
	r.Brief = strings.ToValidUTF8(r.Brief, "\uFFFD")
	r.Feedback = strings.ToValidUTF8(r.Feedback, "\uFFFD")
	if !cut {
		return r
	}
	full := limits.FullText(orig, partText)
	r.Message = limits.NoteCut(r.Message, stateDir, toolCallID, full)
	return r
}
