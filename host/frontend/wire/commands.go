package wire

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kosong-host/kosong-host/host/command"
)

// Slash commands: initialize lists the session's commands (host/command:
// built-in and custom) as slash_commands; a prompt whose user_input is
// "/NAME ARGS" naming one runs it as the terminal does: its messages are
// ContentPart text events between TurnBegin and TurnEnd, and a command
// that sends a prompt (/init, a custom command) runs it as a turn.

// slashCommand is one entry of initialize's slash_commands.
type slashCommand struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Aliases     []string `json:"aliases"`
}

// slashCommands lists the commands, named without their slash.
func (s *server) slashCommands() []slashCommand {
	out := []slashCommand{}
	for _, c := range command.List(s.conv.WorkDir()) {
		out = append(out, slashCommand{Name: strings.TrimPrefix(c.Name, "/"), Description: c.Description, Aliases: []string{}})
	}
	return out
}

// runCommand runs input when it names a slash command, answering the
// prompt request m; false for any other input, which is a prompt.
func (s *server) runCommand(m message, input string) bool {
	name, arg, ok := command.Parse(input)
	if !ok {
		return false
	}
	c, ok := command.Find(s.conv.WorkDir(), name)
	if !ok {
		return false
	}
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		s.emit("TurnBegin", map[string]any{"user_input": input})
		var turnErr error
		turned := false
		c.Run(s.ctx, command.Env{Conv: s.conv,
			Say: func(text string) { s.emit("ContentPart", map[string]any{"type": "text", "text": text + "\n"}) },
			Turn: func(ctx context.Context, prompt string) error {
				turned = true
				_, turnErr = s.conv.Turn(ctx, prompt)
				return turnErr
			}}, arg)
		if !turned {
			s.emit("TurnEnd", map[string]any{})
		}
		switch {
		case s.ctx.Err() != nil:
			s.peer.respond(m.ID, map[string]any{"status": "cancelled"}, nil)
		case turnErr != nil:
			s.peer.respond(m.ID, nil, &rpcError{Code: codeInternal, Message: turnErr.Error()})
		default:
			s.peer.respond(m.ID, map[string]any{"status": "finished"}, nil)
		}
	}()
	return true
}

// setPlanMode is set_plan_mode: {enabled} turns plan mode on or off;
// the answer is {status:"ok", plan_mode} and a StatusUpdate{plan_mode}
// event is sent.
func (s *server) setPlanMode(raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Enabled *bool `json:"enabled"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Enabled == nil {
		return nil, invalidParams("set_plan_mode")
	}
	if !s.conv.SetPlanMode(*p.Enabled) {
		s.emit("StatusUpdate", map[string]any{"plan_mode": s.conv.PlanMode()})
	}
	return map[string]any{"status": "ok", "plan_mode": s.conv.PlanMode()}, nil
}
