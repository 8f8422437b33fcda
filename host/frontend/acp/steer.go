package acp

import (
	"encoding/json"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// MethodSteer is the extension method that sends a message into the
// running turn.
//
// A session/prompt sent while a turn runs cannot steer it: the ACP SDK
// cancels the running prompt when the next one arrives, as the protocol
// has it (a new prompt replaces the turn). Steering is therefore an
// extension method.
const MethodSteer = "_kosong/steer"

// codeNoTurn is the error of a steer when no turn runs (Kimi's wire code).
const codeNoTurn = -32000

// steer handles `_kosong/steer` {sessionId, prompt: [ContentBlock]}: the
// prompt's text (as session/prompt joins it) enters the running turn at
// its next step boundary (conversation.Conversation.Steer), and the
// answer is {status: "steered"}; the editor sees it as a
// user_message_chunk once it entered the history. With no turn running
// the answer is the error -32000 "No agent turn is in progress", and the
// editor sends the text as a prompt of its own.
func (a *Agent) steer(params json.RawMessage) (any, error) {
	var p struct {
		SessionID acpsdk.SessionId      `json:"sessionId"`
		Prompt    []acpsdk.ContentBlock `json:"prompt"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, invalidParams(MethodSteer + ` needs {"sessionId": ID, "prompt": [ContentBlock]}`)
	}
	s, err := a.find(p.SessionID)
	if err != nil {
		return nil, err
	}
	for i, b := range p.Prompt {
		if b.Image != nil || b.Audio != nil {
			return nil, invalidParams(MethodSteer + ": prompt[" + strconv.Itoa(i) + "]: a steered message takes text and resources, not images or audio")
		}
	}
	text := promptText(p.Prompt)
	if strings.TrimSpace(text) == "" {
		return nil, invalidParams(MethodSteer + ": the prompt has no text")
	}
	steered := false
	if s.remote != nil {
		steered = s.remote.Steer(text)
	} else {
		steered = s.conv.Steer(text)
	}
	if !steered {
		return nil, &acpsdk.RequestError{Code: codeNoTurn, Message: "No agent turn is in progress"}
	}
	return map[string]any{"status": "steered"}, nil
}
