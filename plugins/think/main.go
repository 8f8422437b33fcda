// Command kosong-plugin-think serves Think: a place for the model to reason
// in a tool call. The thought stays in the conversation as the call's
// arguments; the tool only logs it at debug level and returns nothing.
package main

import (
	"context"
	"embed"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed think.md
var descriptions embed.FS

// Params are Think's arguments.
type Params struct {
	Thought string `json:"thought" jsonschema_description:"Your thought."`
}

// Think records a thought.
type Think struct{ logger hclog.Logger }

// NewThink constructs the tool with the plugin's logger, whose lines the
// host re-logs (at debug level they show only when the host asks for them).
func NewThink(logger hclog.Logger) (*Think, error) {
	return &Think{logger: logger}, nil
}

// Call logs the thought and returns an empty result.
func (t *Think) Call(_ context.Context, p Params) pluginsdk.Result {
	t.logger.Debug("thought", "chars", len([]rune(p.Thought)))
	return pluginsdk.Ok("")
}

// definitions are the tools this binary serves.
func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[Params]("Think", "Think before acting.", NewThink,
			pluginsdk.WithDescriptionFile(descriptions, "think.md", nil)),
	}
}

func main() {
	if err := pluginsdk.Serve(definitions()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
