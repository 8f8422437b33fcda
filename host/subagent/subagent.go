// Package subagent is the Agent tool: it starts one of the subagents an
// agent's spec declares (`subagents: NAME: {path, description}`) on a
// task and returns the subagent's answer. The Runner that runs the
// subagent's own turn, with its own tools and system prompt, is built by
// host/conversation around the conversation the tool belongs to.
package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// ToolName is the name of the tool that starts subagents.
const ToolName = "Agent"

// Runner runs subagent name on a task and returns its answer.
type Runner func(ctx context.Context, name, task string) (string, error)

type tool struct {
	spec toolset.Spec
	run  Runner
}

// Tool is the Agent tool for the given subagents.
func Tool(subagents map[string]spec.Subagent, run Runner) toolset.Tool {
	names := make([]string, 0, len(subagents))
	for name := range subagents {
		names = append(names, name)
	}
	slices.Sort(names)
	var desc strings.Builder
	desc.WriteString("Start a subagent on a self-contained task. The subagent works on its own, with its own tools, " +
		"and sees nothing of this conversation: give it everything it needs in `prompt`, and say what to report back. " +
		"It returns its final answer. Independent subagent tasks may be started in parallel.\n\nSubagents:\n")
	for _, name := range names {
		fmt.Fprintf(&desc, "- %s: %s\n", name, subagents[name].Description)
	}
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"subagent": map[string]any{"type": "string", "enum": names, "description": "The subagent to start."},
			"prompt":   map[string]any{"type": "string", "description": "The task, with all the context the subagent needs."},
		},
		"required":             []string{"subagent", "prompt"},
		"additionalProperties": false,
	})
	return &tool{run: run, spec: toolset.Spec{Name: ToolName, Description: strings.TrimSpace(desc.String()),
		Parameters: schema, Source: "host (subagents)"}}
}

func (t *tool) Spec() toolset.Spec { return t.spec }

type callIDKey struct{}

// CallID is the id of the Agent call whose subagent runs with ctx ("" if
// none).
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

func (t *tool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	ctx = context.WithValue(ctx, callIDKey{}, id)
	var p struct {
		Subagent string `json:"subagent"`
		Prompt   string `json:"prompt"`
	}
	if err := json.Unmarshal(args, &p); err != nil {
		return toolset.ParseError(err)
	}
	answer, err := t.run(ctx, p.Subagent, p.Prompt)
	if err != nil {
		return toolset.Result{Kind: toolset.Failed, Message: fmt.Sprintf("Subagent %s failed: %v", p.Subagent, err),
			Brief: "Subagent " + p.Subagent + " failed", Output: text(answer)}
	}
	if strings.TrimSpace(answer) == "" {
		return toolset.Result{Message: fmt.Sprintf("Subagent %s finished without an answer.", p.Subagent), Brief: p.Subagent + ": no answer"}
	}
	return toolset.Result{Output: text(answer), Brief: p.Subagent + " answered"}
}

func text(s string) []providers.ContentPart {
	if s == "" {
		return nil
	}
	return []providers.ContentPart{providers.TextPart(s)}
}
