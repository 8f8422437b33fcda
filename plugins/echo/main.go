// Package echo is the Echo tool. It is the template for a new tool plugin:
// a parameters struct, a handler, a constructor and the list of the
// plugin's tools here; cmd/kosong-plugin-echo serves them as a binary.
package echo

import (
	"context"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// EchoParams are the Echo tool's arguments.
type EchoParams struct {
	Text string `json:"text" jsonschema:"The text to echo back."`
}

// Echo returns its text unchanged.
type Echo struct{}

// Call echoes the text.
func (Echo) Call(_ context.Context, p EchoParams) pluginsdk.Result {
	return pluginsdk.Ok(p.Text).WithBrief("echoed")
}

// NewEcho constructs the tool; it needs no host capability.
func NewEcho() (Echo, error) { return Echo{}, nil }

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[EchoParams]("Echo", "Echo the given text back, unchanged.", NewEcho, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld()),
	}
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-echo).
func Tools() []pluginsdk.Definition { return definitions() }
