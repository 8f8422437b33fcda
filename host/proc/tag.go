package proc

import (
	"crypto/rand"
	"encoding/hex"
)

// TagEnv names the variable that marks a child (a plugin, an MCP server)
// and everything it starts: each child gets a tag of its own, which its
// descendants inherit with their environment, wherever they are reparented
// and whatever process group they are in. KillTagged finds them by it.
const TagEnv = "KOSONG_PROCESS_TAG"

// NewTag returns a fresh random tag.
func NewTag() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TagVar is the NAME=VALUE entry of tag, for a child's environment.
func TagVar(tag string) string { return TagEnv + "=" + tag }
