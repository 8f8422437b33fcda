package toolset

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// MaxNameLen is the longest tool name every provider accepts.
const MaxNameLen = 64

// validName is the tool name pattern every provider accepts (OpenAI,
// Anthropic and Gemini alike).
var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidName reports whether every provider accepts name as a tool name.
func ValidName(name string) bool { return validName.MatchString(name) }

// ModelName is the name a tool is offered to the model under: its own name
// when every provider accepts it, else a sanitized one. Each character
// outside [a-zA-Z0-9_-] becomes '_' (files.read -> files_read); a name
// longer than MaxNameLen keeps its first 55 characters and gets '_' and 8
// hex digits of a hash of the whole name, so that long names sharing a
// prefix stay apart. The toolset routes calls back by this name; two tools
// that would share one is a load error.
func ModelName(name string) string {
	if ValidName(name) {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > MaxNameLen {
		sum := sha256.Sum256([]byte(name))
		s = s[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return s
}
