package pluginsdk

import (
	"errors"
	"fmt"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Annotations say what a tool does, as declared with ReadOnly, Destructive,
// Idempotent, OpenWorld and ClosedWorld; a nil field is unknown. The host
// shows them (tools list, tools describe), offers only read-only tools in
// plan mode and passes them on to MCP clients of `kosong-host mcp serve`.
type Annotations = pluginrpc.Annotations

// Annotations are what the tool declares it does.
func (d Definition) Annotations() Annotations { return d.annotations }

// ReadOnly declares that the tool does not change its environment (and so
// destroys nothing). It contradicts Destructive.
func ReadOnly() Option {
	return func(def *Definition) {
		if isTrue(def.annotations.Destructive) {
			def.err = errors.Join(def.err, fmt.Errorf("tool %s: declared both read-only and destructive", def.name))
			return
		}
		def.annotations.ReadOnly, def.annotations.Destructive = ptr(true), ptr(false)
	}
}

// Destructive declares that the tool may destroy or overwrite data (and so
// is not read-only). It contradicts ReadOnly.
func Destructive() Option {
	return func(def *Definition) {
		if isTrue(def.annotations.ReadOnly) {
			def.err = errors.Join(def.err, fmt.Errorf("tool %s: declared both read-only and destructive", def.name))
			return
		}
		def.annotations.ReadOnly, def.annotations.Destructive = ptr(false), ptr(true)
	}
}

// Idempotent declares that calling the tool again with the same arguments
// has no further effect, so a call may be repeated safely.
func Idempotent() Option { return func(def *Definition) { def.annotations.Idempotent = ptr(true) } }

// OpenWorld declares that the tool reaches outside the machine: the web,
// other services.
func OpenWorld() Option { return func(def *Definition) { def.annotations.OpenWorld = ptr(true) } }

// ClosedWorld declares that the tool keeps to the machine it runs on (its
// files, its processes).
func ClosedWorld() Option { return func(def *Definition) { def.annotations.OpenWorld = ptr(false) } }

func ptr(b bool) *bool { return &b }

func isTrue(b *bool) bool { return b != nil && *b }
