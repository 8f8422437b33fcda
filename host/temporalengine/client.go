package temporalengine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// WorkflowIDPrefix prefixes a session id to make its workflow id.
const WorkflowIDPrefix = "kosong-session-"

// Session is a session workflow as a front end drives it: its turns run
// on the workers.
type Session struct {
	c  client.Client
	id string
	// interrupted: a turn's ctx ended while it ran; Close cancels the
	// workflow (and its running calls) instead of waiting for it.
	interrupted atomic.Bool
	// dc reads the payloads the session's feeds carry (nil: the SDK's
	// default converter).
	dc converter.DataConverter
}

// WithDataConverter makes the session read its feeds with dc, the data
// converter its client was dialed with (as with a payload key: the feeds'
// payloads are sealed as every other payload is). It returns s.
func (s *Session) WithDataConverter(dc converter.DataConverter) *Session {
	s.dc = dc
	return s
}

var _ conversation.Engine = (*Session)(nil)

// Start starts a session workflow on the task queue ("" the default).
func Start(ctx context.Context, c client.Client, taskQueue string, in SessionInput) (*Session, error) {
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowIDPrefix + id, TaskQueue: taskQueue}, WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("starting the session on Temporal: %w", err)
	}
	return &Session{c: c, id: id}, nil
}

// Attach is the running session id.
func Attach(c client.Client, id string) *Session { return &Session{c: c, id: id} }

// ID is the session id.
func (s *Session) ID() string { return s.id }

// WorkflowID is the session's workflow id.
func (s *Session) WorkflowID() string { return WorkflowIDPrefix + s.id }

// Turn runs a turn and waits for its end.
func (s *Session) Turn(ctx context.Context, input string) (loop.TurnResult, error) {
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.WorkflowID(), UpdateName: UpdateTurn,
		Args: []any{input}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var out TurnOutcome
	if err == nil {
		err = h.Get(ctx, &out)
	}
	return s.turnResult(ctx, out, err)
}

// History is the session's history ("nil" when the workflow cannot be
// asked).
func (s *Session) History() []providers.Message {
	h, _ := s.history(context.Background())
	return h
}

func (s *Session) history(ctx context.Context) ([]providers.Message, error) {
	v, err := s.c.QueryWorkflow(ctx, s.WorkflowID(), "", QueryHistory)
	if err != nil {
		return nil, err
	}
	var h []providers.Message
	return h, v.Get(&h)
}

// Close ends the session once no turn runs and waits for the workflow to
// finish; after an interrupted turn it cancels the workflow, whose running
// calls are cancelled at their next heartbeat.
func (s *Session) Close() {
	ctx := context.Background()
	if s.interrupted.Load() {
		_ = s.c.CancelWorkflow(ctx, s.WorkflowID(), "")
		return
	}
	if err := s.c.SignalWorkflow(ctx, s.WorkflowID(), "", SignalClose, nil); err != nil {
		return
	}
	_ = s.c.GetWorkflow(ctx, s.WorkflowID(), "").Get(ctx, nil)
}

// Pending lists the approvals the session's tool calls wait for.
func (s *Session) Pending(ctx context.Context) ([]Pending, error) {
	v, err := s.c.QueryWorkflow(ctx, s.WorkflowID(), "", QueryApprovals)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.id, err)
	}
	var out []Pending
	return out, v.Get(&out)
}

// Answer answers a pending approval; the call runs again with it. Any
// attached client may answer; the first answer wins, a later one is
// refused (nothing pending).
func (s *Session) Answer(ctx context.Context, a Answer) error {
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.WorkflowID(), UpdateName: UpdateApprove,
		Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}
