package mcpclient

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/toolset"
)

// annotationsOf maps an MCP tool's hints to the host's annotations: none
// without hints. readOnlyHint and idempotentHint count only when true: a
// false one is MCP's default, which the go-sdk cannot tell from an absent
// one, and means to the host what unknown does. destructiveHint and
// openWorldHint count as sent.
func annotationsOf(h *mcp.ToolAnnotations) toolset.Annotations {
	if h == nil {
		return toolset.Annotations{}
	}
	var a toolset.Annotations
	if h.ReadOnlyHint {
		a.ReadOnly = ptr(true)
	}
	if h.IdempotentHint {
		a.Idempotent = ptr(true)
	}
	if h.DestructiveHint != nil {
		a.Destructive = ptr(*h.DestructiveHint)
	}
	if h.OpenWorldHint != nil {
		a.OpenWorld = ptr(*h.OpenWorldHint)
	}
	return a
}

func ptr(b bool) *bool { return &b }
