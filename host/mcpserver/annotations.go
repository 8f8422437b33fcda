package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/toolset"
)

// toolAnnotations are a tool's annotations as MCP hints: nil when the tool
// declares none, so clients apply MCP's defaults. An unknown read-only or
// idempotent is sent as false, MCP's default for both; an unknown
// destructive or open-world is left out (MCP's default: true).
func toolAnnotations(a toolset.Annotations) *mcp.ToolAnnotations {
	if a.ReadOnly == nil && a.Destructive == nil && a.Idempotent == nil && a.OpenWorld == nil {
		return nil
	}
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    a.IsReadOnly(),
		DestructiveHint: a.Destructive,
		IdempotentHint:  a.Idempotent != nil && *a.Idempotent,
		OpenWorldHint:   a.OpenWorld,
	}
}

// annotationsKey tells a change of a tool's annotations from none.
func annotationsKey(a toolset.Annotations) string {
	b := func(p *bool) byte {
		switch {
		case p == nil:
			return '?'
		case *p:
			return 't'
		}
		return 'f'
	}
	return string([]byte{b(a.ReadOnly), b(a.Destructive), b(a.Idempotent), b(a.OpenWorld)})
}
