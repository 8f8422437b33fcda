// Command kosong-plugin-echo serves the Echo tool. It is the template for a
// new tool plugin: a parameters struct, a handler, a constructor, Serve.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// EchoParams are the Echo tool's arguments.
type EchoParams struct {
	Text string `json:"text" jsonschema:"description=The text to echo back."`
}

// Echo returns its text unchanged.
type Echo struct{}

// Call echoes the text.
func (Echo) Call(_ context.Context, p EchoParams) pluginsdk.Result {
	return pluginsdk.Ok(p.Text).WithBrief("echoed")
}

// NewEcho constructs the tool; it needs no host capability.
func NewEcho() (Echo, error) { return Echo{}, nil }

// definitions are the tools this binary serves.
func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[EchoParams]("Echo", "Echo the given text back, unchanged.", NewEcho),
	}
}

func main() {
	if err := pluginsdk.Serve(definitions()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
