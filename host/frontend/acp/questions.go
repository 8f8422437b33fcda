package acp

import (
	"context"
	"errors"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/approval"
)

// errCannotAsk is what the model learns when a call's questions do not fit
// a permission request (Kimi's text for a client that cannot ask).
var errCannotAsk = errors.New("The connected client does not support interactive questions. " +
	"Do NOT call this tool again. Ask the user directly in your text response instead.")

const (
	optionAnswerPrefix = "answer-"
	optionDismiss      = "dismiss"
)

// askQuestions forwards AskUserQuestion to the client. ACP has no question
// request, so one single-select question becomes a session/request_permission
// whose options are the question's options (plus Dismiss); the chosen
// option's label is the answer. Several questions or a multi-select one do
// not fit: the call fails with errCannotAsk.
func (a *Agent) askQuestions(ctx context.Context, s *session, req approval.QuestionRequest) (approval.Answers, error) {
	if len(req.Questions) != 1 || req.Questions[0].MultiSelect {
		return approval.Answers{}, errCannotAsk
	}
	q := req.Questions[0]
	title := q.Question
	if q.Header != "" {
		title = "[" + q.Header + "] " + q.Question
	}
	opts := make([]acpsdk.PermissionOption, 0, len(q.Options)+1)
	for i, o := range q.Options {
		name := o.Label
		if d := strings.TrimSpace(o.Description); d != "" {
			name += " - " + d
		}
		opts = append(opts, acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(optionAnswerPrefix + strconv.Itoa(i)),
			Name: name, Kind: acpsdk.PermissionOptionKindAllowOnce})
	}
	opts = append(opts, acpsdk.PermissionOption{OptionId: optionDismiss, Name: "Dismiss", Kind: acpsdk.PermissionOptionKindRejectOnce})
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: acpsdk.SessionId(s.id),
		ToolCall: acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(req.ToolCallID), Title: acpsdk.Ptr(title),
			Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending)},
		Options: opts})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answers{}, ctx.Err()
		}
		a.cfg.Logger.Warn("acp: question request failed; dismissed", "tool", req.ToolName, "error", err)
		return approval.Answers{Dismissed: true}, nil
	}
	if resp.Outcome.Selected == nil {
		return approval.Answers{Dismissed: true}, nil
	}
	id := string(resp.Outcome.Selected.OptionId)
	if n, err := strconv.Atoi(strings.TrimPrefix(id, optionAnswerPrefix)); err == nil && strings.HasPrefix(id, optionAnswerPrefix) &&
		n >= 0 && n < len(q.Options) {
		return approval.Answers{Answers: map[string]string{q.Question: q.Options[n].Label}}, nil
	}
	return approval.Answers{Dismissed: true}, nil
}
