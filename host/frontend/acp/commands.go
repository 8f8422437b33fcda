package acp

import (
	"context"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/command"
)

// Slash commands: the session's commands (host/command: the built-in ones
// and the custom commands of the session's folder) are advertised with
// available_commands_update after session/new and session/load; a prompt
// "/NAME ARGS" naming one runs it as the terminal does (/compact compacts
// and never reaches the model), its messages sent as agent message chunks.

// commandTurn marks the context of a command's own turn (/init, a custom
// command), whose prompt is sent to the model as it is.
type commandTurn struct{}

// advertiseCommands sends the session's commands to the client.
func (a *Agent) advertiseCommands(s *session) {
	var list []acpsdk.AvailableCommand
	for _, c := range command.List(s.conv.WorkDir()) {
		ac := acpsdk.AvailableCommand{Name: strings.TrimPrefix(c.Name, "/"), Description: c.Description}
		if c.Args != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: strings.Trim(c.Args, "[]")}}
		}
		list = append(list, ac)
	}
	s.out.send(context.Background(), acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: list}})
}

// runCommand runs input when it is a slash command of the session; ok is
// false for any other prompt (and a "/WORD" naming no command is sent to
// the model as written).
func (a *Agent) runCommand(ctx context.Context, s *session, input string) (res acpsdk.PromptResponse, ok bool, err error) {
	name, arg, isCmd := command.Parse(input)
	if !isCmd || ctx.Value(commandTurn{}) != nil {
		return res, false, nil
	}
	c, found := command.Find(s.conv.WorkDir(), name)
	if !found {
		return res, false, nil
	}
	var turnErr error
	turned := false
	c.Run(ctx, command.Env{Conv: s.conv,
		Say: func(text string) { s.out.send(ctx, acpsdk.UpdateAgentMessageText(text+"\n")) },
		Turn: func(ctx context.Context, prompt string) error {
			turned = true
			ctx = context.WithValue(ctx, commandTurn{}, true)
			res, turnErr = a.Prompt(ctx, acpsdk.PromptRequest{SessionId: acpsdk.SessionId(s.id), Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(prompt)}})
			return turnErr
		}}, arg)
	if ctx.Err() != nil {
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, true, nil
	}
	if !turned {
		res = acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}
	}
	return res, true, turnErr
}
