// Package think is Think: a place for the model to reason in a tool call.
// The thought stays in the conversation as the call's arguments; the tool
// only logs it at debug level and returns nothing.
package think

import (
	"context"
	"embed"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed think.md
var descriptions embed.FS

// Params are Think's arguments.
type Params struct {
	Thought string `json:"thought" jsonschema:"Your thought."`
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

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[Params]("Think", "Think before acting.", NewThink, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "think.md", nil)),
	}
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-think).
func Tools() []pluginsdk.Definition { return definitions() }
