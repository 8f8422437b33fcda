package wire

import (
	"context"
	"encoding/json"

	"github.com/kosong-host/kosong-host/host/approval"
)

// firstCapabilities are the capabilities an initialize (the connection's
// first message, line) declares; false when line is no initialize.
func firstCapabilities(line []byte) (clientCapabilities, bool) {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return clientCapabilities{}, false
	}
	var p initParams
	if json.Unmarshal(m.Params, &p) != nil {
		return clientCapabilities{}, false
	}
	return p.Capabilities, true
}

// askQuestions sends a QuestionRequest and reads the answers, {question
// text: label} (the labels of a multi-select question joined with ", ").
// An empty answer (or an error, a bad answer, the end of the connection)
// counts as dismissed.
func (s *server) askQuestions(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
	id := s.peer.nextID("question")
	qs := make([]map[string]any, 0, len(req.Questions))
	for _, q := range req.Questions {
		opts := make([]map[string]string, 0, len(q.Options))
		for _, o := range q.Options {
			opts = append(opts, map[string]string{"label": o.Label, "description": o.Description})
		}
		qs = append(qs, map[string]any{"question": q.Question, "header": q.Header, "options": opts, "multi_select": q.MultiSelect})
	}
	raw, err := s.peer.call(ctx, id, "request", map[string]any{"type": "QuestionRequest", "payload": map[string]any{
		"id": id, "tool_call_id": req.ToolCallID, "questions": qs,
	}})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answers{}, ctx.Err()
		}
		s.cfg.Logger.Warn("wire: question request failed; dismissed", "id", id, "error", err)
		return approval.Answers{Dismissed: true}, nil
	}
	var ans struct {
		RequestID string            `json:"request_id"`
		Answers   map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		s.cfg.Logger.Warn("wire: invalid question answer; dismissed", "id", id, "error", err)
		return approval.Answers{Dismissed: true}, nil
	}
	if ans.RequestID != "" && ans.RequestID != id {
		s.cfg.Logger.Warn("wire: question answer names another request", "id", id, "request_id", ans.RequestID)
	}
	if len(ans.Answers) == 0 {
		return approval.Answers{Dismissed: true}, nil
	}
	return approval.Answers{Answers: ans.Answers}, nil
}

// reload reloads the agent: the answer names the plugins started, stopped
// and kept and the tools once it takes effect (at the next step of a
// running turn, at once when idle), or the error that kept the old toolset.
func (s *server) reload(m message) {
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		res, err := s.conv.ReloadAgent(s.ctx)
		if err != nil {
			s.peer.respond(m.ID, nil, &rpcError{Code: codeInternal, Message: err.Error()})
			return
		}
		s.peer.respond(m.ID, map[string]any{"started": nonNil(res.Started), "stopped": nonNil(res.Stopped),
			"kept": nonNil(res.Kept), "tools": nonNil(res.Tools), "unapplied": nonNil(res.Unapplied)}, nil)
	}()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
