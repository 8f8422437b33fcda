// Package subagent gives an agent the Agent tool: it starts one of the
// subagents its spec declares (`subagents: NAME: {path, description}`) on a
// task, runs the subagent's own turn with its own tools and system prompt,
// and returns the subagent's answer.
package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/prompt"
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

func (t *tool) Call(ctx context.Context, _ string, args json.RawMessage) toolset.Result {
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

// Config says how subagents run.
type Config struct {
	Subagents map[string]spec.Subagent
	Provider  providers.ChatProvider
	// Options load each subagent's tools; its plugins keep their state in
	// StateDir/subagents/NAME.
	Options agent.Options
	// MaxStepsPerTurn bounds the subagent's turn.
	MaxStepsPerTurn int
	// MaxContextSize is the model's context window (0: unknown).
	MaxContextSize int64
	// Observer receives the subagent loop's events; nil drops them.
	Observer loop.Observer
	// Guard admits the subagent's tool calls (the parent's permission
	// rules and hooks); nil admits all.
	Guard toolset.Guard
}

// NewRunner returns the Runner that loads a subagent's spec and tools,
// runs one turn on the task and returns its last answer. The subagent's
// approvals go to the same decider as its parent's; a subagent has no Agent
// tool of its own.
func NewRunner(cfg Config) Runner {
	return func(ctx context.Context, name, task string) (string, error) {
		sub, ok := cfg.Subagents[name]
		if !ok {
			return "", fmt.Errorf("no subagent %q", name)
		}
		s, err := spec.Load(sub.Path, spec.LoadOptions{DefaultAgentPath: cfg.Options.DefaultAgentPath})
		if err != nil {
			return "", err
		}
		system, err := prompt.Render(s.SystemPromptPath, s.SystemPromptArgs, prompt.Options{WorkDir: cfg.Options.WorkDir, Getenv: cfg.Options.Getenv})
		if err != nil {
			return "", err
		}
		opts := cfg.Options
		opts.StateDir = filepath.Join(cfg.Options.StateDir, "subagents", name)
		a, err := agent.LoadSpec(ctx, s, opts)
		if err != nil {
			return "", err
		}
		defer a.Close()
		if cfg.Guard != nil {
			a.Toolset.SetGuard(cfg.Guard)
		}
		l, err := loop.New(loop.Config{Provider: cfg.Provider, Toolset: a.Toolset, System: system,
			MaxStepsPerTurn: cfg.MaxStepsPerTurn, Observer: cfg.Observer, MaxContextSize: cfg.MaxContextSize})
		if err != nil {
			return "", err
		}
		_, turnErr := l.Turn(ctx, task)
		answer := lastAnswer(l.History())
		if turnErr != nil {
			return answer, turnErr
		}
		return answer, nil
	}
}

// lastAnswer is the text of the last assistant message.
func lastAnswer(history []providers.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == providers.RoleAssistant {
			if t := strings.TrimSpace(history[i].Text()); t != "" {
				return t
			}
		}
	}
	return ""
}
