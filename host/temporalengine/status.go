package temporalengine

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/providers"
)

// QueryStatus answers the session's Status: what a front end that
// attaches to a running session (a restarted serve) needs to follow it.
const QueryStatus = "status"

// Status is the state of a session workflow.
type Status struct {
	// Busy: a turn runs.
	Busy bool
	// Turns counts the turns started (the running one included).
	Turns int
	// HistoryLen is the length of the history (a turn's messages enter
	// it once each step's calls ended).
	HistoryLen int
	// Last is the outcome of the last turn that ended in this run (nil
	// before one did).
	Last *TurnOutcome `json:",omitempty"`
	// Pending are the approvals the running turn waits for.
	Pending []Pending
	// Questions are the tools' questions it waits for.
	Questions []approval.QuestionRequest `json:",omitempty"`
}

// setStatusHandler registers QueryStatus.
func (s *session) setStatusHandler(ctx workflow.Context) error {
	return workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) {
		st := Status{Busy: s.busy, Turns: s.turns, HistoryLen: len(s.history), Last: s.last}
		for _, id := range sortedKeys(s.appr.pending) {
			st.Pending = append(st.Pending, Pending{Request: s.appr.pending[id]})
		}
		for _, id := range sortedKeys(s.qs.pending) {
			st.Questions = append(st.Questions, s.qs.pending[id])
		}
		return st, nil
	})
}

// CancelTurn cancels the running turn, as Ctrl-C does in process: calls
// that finished keep their results, the running ones are cancelled at
// their next heartbeat and answered as interrupted, and the turn ends
// cancelled. Nothing happens when no turn runs.
func (s *Session) CancelTurn(ctx context.Context) error {
	if err := s.c.SignalWorkflow(ctx, s.WorkflowID(), "", SignalCancelTurn, nil); err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}

// Status asks the session's workflow for its state.
func (s *Session) Status(ctx context.Context) (Status, error) {
	v, err := s.c.QueryWorkflow(ctx, s.WorkflowID(), "", QueryStatus)
	if err != nil {
		return Status{}, fmt.Errorf("session %s: %w", s.id, err)
	}
	var st Status
	return st, v.Get(&st)
}

// StartTurn sends input as the next turn and returns once the workflow
// took it (it runs on; Status follows it): the front end need not stay
// connected until it ends.
func (s *Session) StartTurn(ctx context.Context, input string) error {
	_, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.WorkflowID(), UpdateName: UpdateTurn,
		Args: []any{input}, WaitForStage: client.WorkflowUpdateStageAccepted})
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}

// End ends the session: once no turn runs, or at once (cancelling the
// running calls) when cancel is set. It does not wait for the workflow.
func (s *Session) End(ctx context.Context, cancel bool) error {
	var err error
	if cancel {
		err = s.c.CancelWorkflow(ctx, s.WorkflowID(), "")
	} else {
		err = s.c.SignalWorkflow(ctx, s.WorkflowID(), "", SignalClose, nil)
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}

// Messages is the session's history.
func (s *Session) Messages(ctx context.Context) ([]providers.Message, error) {
	h, err := s.history(ctx)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.id, err)
	}
	return h, nil
}
