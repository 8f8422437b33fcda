package plugin

import (
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/pins"
)

// PluginPin says which binary runs the tool (the audit log's plugin and
// pin): "builtin VERSION" for a built-in plugin, "sha256:HEX" for a
// pinned one (the agent file's or lock file's pin, checked at start),
// else "unpinned sha256:HEX", the file's own hash (computed once per
// file version), or "unpinned" when the file cannot be read.
func (t *tool) PluginPin() (string, string) {
	cfg := t.plugin.cfg
	switch {
	case cfg.Builtin:
		return t.plugin.name, "builtin " + hostVersion()
	case cfg.SHA256 != "":
		return t.plugin.name, "sha256:" + cfg.SHA256
	}
	if sum := fileHash(cfg.Path); sum != "" {
		return t.plugin.name, "unpinned sha256:" + sum
	}
	return t.plugin.name, "unpinned"
}

// hostVersion is the host binary's module version ("(devel)" for a
// build from a work tree).
func hostVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

type hashKey struct {
	path string
	size int64
	mod  time.Time
}

var hashes sync.Map // hashKey -> string

// fileHash is the sha256 of the file at path, cached by size and time.
func fileHash(path string) string {
	st, err := os.Stat(path)
	if err != nil || path == "" {
		return ""
	}
	key := hashKey{path, st.Size(), st.ModTime()}
	if v, ok := hashes.Load(key); ok {
		return v.(string)
	}
	sum, err := pins.FileSHA256(path)
	if err != nil {
		return ""
	}
	hashes.Store(key, sum)
	return sum
}
