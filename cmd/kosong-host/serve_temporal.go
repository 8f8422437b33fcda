package main

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/server"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/temporalengine"
	"github.com/kosong-host/kosong-host/providers"
)

// temporalRemote runs serve's sessions on Temporal (serve --engine
// temporal): each is a session workflow whose turns the workers run.
type temporalRemote struct {
	c        client.Client
	e        *engineFlags
	maxSteps int
}

var _ server.Remote = (*temporalRemote)(nil)

func (r *temporalRemote) Name() string { return "temporal" }

func (r *temporalRemote) Start(ctx context.Context, req server.OpenRequest) (server.RemoteSession, error) {
	if req.Agent != "" || req.Model != "" {
		return nil, errors.New("a session on the temporal engine uses the workers' agent and model: create it without agent and model")
	}
	s, err := temporalengine.Start(ctx, r.c, r.e.taskQueue, temporalengine.SessionInput{WorkDir: req.WorkDir,
		Yolo: req.Mode == serverclient.ModeYolo, PlanMode: req.Mode == serverclient.ModePlan,
		MaxStepsPerTurn: r.maxSteps, Heartbeat: r.e.heartbeat})
	if err != nil {
		return nil, err
	}
	return temporalSession{s.WithDataConverter(r.e.dc)}, nil
}

func (r *temporalRemote) Attach(id string) server.RemoteSession {
	return temporalSession{temporalengine.Attach(r.c, id).WithDataConverter(r.e.dc)}
}

// temporalSession is a session workflow as the server follows it.
type temporalSession struct{ s *temporalengine.Session }

func (t temporalSession) ID() string { return t.s.ID() }

func (t temporalSession) StartTurn(ctx context.Context, input string) error {
	return t.s.StartTurn(ctx, input)
}

func (t temporalSession) Status(ctx context.Context) (server.RemoteStatus, error) {
	st, err := t.s.Status(ctx)
	if err != nil {
		return server.RemoteStatus{}, err
	}
	out := server.RemoteStatus{Busy: st.Busy, Turns: st.Turns, HistoryLen: st.HistoryLen}
	if l := st.Last; l != nil {
		out.Last = &server.RemoteOutcome{Steps: l.Steps, Reason: l.Reason, ModelStop: l.ModelStop, Usage: l.Usage, Error: l.Error}
	}
	for _, p := range st.Pending {
		out.Pending = append(out.Pending, p.Request)
	}
	out.Questions = st.Questions
	return out, nil
}

func (t temporalSession) History(ctx context.Context) ([]providers.Message, error) {
	return t.s.Messages(ctx)
}

func (t temporalSession) Answer(ctx context.Context, toolCallID string, a approval.Answer, feedback string) error {
	err := t.s.Answer(ctx, temporalengine.Answer{ToolCallID: toolCallID, Answer: a, Feedback: feedback})
	if err != nil && temporalengine.NotPending(err) {
		return fmt.Errorf("%w: %v", server.ErrNotPending, err)
	}
	return err
}

func (t temporalSession) AnswerQuestions(ctx context.Context, toolCallID string, a approval.Answers) error {
	err := t.s.AnswerQuestions(ctx, temporalengine.QuestionAnswer{ToolCallID: toolCallID, Answers: a})
	if err != nil && temporalengine.NotPending(err) {
		return fmt.Errorf("%w: %v", server.ErrNotPending, err)
	}
	return err
}

func (t temporalSession) CancelTurn(ctx context.Context) error { return t.s.CancelTurn(ctx) }

func (t temporalSession) End(ctx context.Context, cancel bool) error { return t.s.End(ctx, cancel) }
