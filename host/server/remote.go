package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/providers"
)

// Remote is an engine whose sessions run outside the server's process
// (serve --engine temporal): the server starts them, sends their turns
// and follows them; they outlive the server, which attaches to them again
// by session id when it restarts.
type Remote interface {
	// Name is the engine's name, kept in the session list.
	Name() string
	// Start starts a new session (req's Ask, Questions and Observer are
	// unused: the server follows the session through RemoteSession).
	Start(ctx context.Context, req OpenRequest) (RemoteSession, error)
	// Attach is the session id as it runs.
	Attach(id string) RemoteSession
}

// RemoteSession is a session of a Remote engine.
type RemoteSession interface {
	ID() string
	// StartTurn sends input as the next turn and returns once the engine
	// took it; Status follows it.
	StartTurn(ctx context.Context, input string) error
	Status(ctx context.Context) (RemoteStatus, error)
	History(ctx context.Context) ([]providers.Message, error)
	// Answer answers the approval a tool call waits for; an error wrapping
	// ErrNotPending when none is (another client answered first).
	Answer(ctx context.Context, toolCallID string, a approval.Answer, feedback string) error
	// AnswerQuestions answers the questions a tool call waits for (or
	// dismisses them); an error wrapping ErrNotPending when none are.
	AnswerQuestions(ctx context.Context, toolCallID string, a approval.Answers) error
	// CancelTurn cancels the running turn (the engine ends it cancelled).
	CancelTurn(ctx context.Context) error
	// End ends the session: once no turn runs, or at once (the running
	// calls cancelled) when cancel is set.
	End(ctx context.Context, cancel bool) error
}

// ErrNotPending: the approval was answered already (or never asked).
var ErrNotPending = errors.New("no such approval is pending")

// RemoteStatus is a remote session's state.
type RemoteStatus struct {
	Busy bool
	// Turns counts the turns started.
	Turns int
	// HistoryLen is the history's length.
	HistoryLen int
	// Last is the outcome of the last turn that ended (nil if unknown).
	Last *RemoteOutcome
	// Pending are the approvals the running turn waits for.
	Pending []approval.Request
	// Questions are the tools' questions it waits for.
	Questions []approval.QuestionRequest
}

// RemoteOutcome is how a remote turn ended.
type RemoteOutcome struct {
	Steps     int
	Reason    loop.StopReason
	ModelStop providers.StopReason
	Usage     providers.Usage
	Error     string
}

// remotePoll is how often the server asks a remote session's state while
// a turn runs.
const remotePoll = 250 * time.Millisecond

// remoteGiveUp: the engine unreachable for this long ends the followed
// turn with an error event (the turn may go on on the engine).
const remoteGiveUp = 2 * time.Minute

// decisionElsewhere is request_answered's decision for an approval
// answered outside this server (the approvals command, another server).
const decisionElsewhere = "answered_elsewhere"

// remoteEvents are the events of the messages history[from:] added by the
// turn that started at turnStart: the engine reports no deltas, so each
// step is its final text, reasoning, tool calls and results. It is the
// one place where a remote engine's output becomes server events.
func remoteEvents(history []providers.Message, turnStart, from int) []any {
	var evs []any
	step, names := 0, map[string]string{}
	for i := turnStart; i < len(history); i++ {
		m := history[i]
		switch m.Role {
		case providers.RoleAssistant:
			step++
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
			if i < from {
				continue
			}
			evs = append(evs, streamjson.StepStartEvent{Type: "step_start", Step: step, Attempt: 1})
			if m.Reasoning != "" {
				evs = append(evs, streamjson.TextEvent{Type: "reasoning", Step: step, Text: m.Reasoning})
			}
			if t := m.Text(); t != "" {
				evs = append(evs, streamjson.TextEvent{Type: "text", Step: step, Text: t})
			}
			for _, c := range m.ToolCalls {
				evs = append(evs, streamjson.ToolCallEvent{Type: "tool_call", Step: step, ID: c.ID, Name: c.Name,
					Arguments: c.Arguments, Truncated: c.Truncated})
			}
		case providers.RoleTool:
			if i < from {
				continue
			}
			status := "ok"
			if m.IsError {
				status = "error"
			}
			evs = append(evs, streamjson.ToolResultEvent{Type: "tool_result", Step: step, ID: m.ToolCallID,
				Name: names[m.ToolCallID], Status: status, IsError: m.IsError, Output: m.Text()})
		}
	}
	return evs
}

// remoteEnd are the events that end a remote turn (nil out: its outcome
// is unknown, as after the engine continued the session in a new run).
func remoteEnd(out *RemoteOutcome, err error) []any {
	ev := streamjson.TurnEndEvent{Type: "turn_end"}
	var evs []any
	switch {
	case err != nil:
		ev.Reason, ev.Error = string(loop.StopError), err.Error()
	case out != nil:
		ev.Steps, ev.Reason, ev.Usage, ev.StopReason, ev.Error = out.Steps, string(out.Reason), out.Usage, string(out.ModelStop), out.Error
	}
	if ev.Error != "" {
		evs = append(evs, errorEvent{Type: "error", Error: ev.Error})
	}
	return append(evs, ev)
}

// logRemote logs evs, saving first the session list with the sequence
// numbers they take: a server killed meanwhile starts its next log after
// every number a client may have seen.
func (s *session) logRemote(evs ...any) int64 {
	if len(evs) == 0 {
		return 0
	}
	s.mu.Lock()
	s.rec.LastSeq = s.log.last() + int64(len(evs))
	rec := s.rec
	s.mu.Unlock()
	s.srv.saveRecord(rec)
	var seq int64
	for _, ev := range evs {
		seq = s.log.add(ev)
	}
	return seq
}

// openRemote starts a new remote session, or attaches to the running
// one of id (a client reattaching by session id).
func (s *Server) openRemote(ctx context.Context, rec record) (*session, error) {
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	if draining {
		return nil, errDraining
	}
	rec.Engine = s.cfg.Remote.Name()
	var rs RemoteSession
	var st RemoteStatus
	if rec.ID == "" {
		var err error
		rs, err = s.cfg.Remote.Start(context.WithoutCancel(ctx), OpenRequest{WorkDir: rec.Cwd, Agent: rec.AgentRequested, Model: rec.Model, Mode: rec.Mode})
		if err != nil {
			return nil, openError{err}
		}
	} else {
		rs = s.cfg.Remote.Attach(rec.ID)
		var err error
		if st, err = rs.Status(ctx); err != nil {
			return nil, openError{fmt.Errorf("session %s on %s: %w", rec.ID, rec.Engine, err)}
		}
		rec.Turn, rec.TurnStart, rec.Seen, rec.TurnEnded = st.Turns, st.HistoryLen, st.HistoryLen, !st.Busy
	}
	rec.ID = rs.ID()
	rec.Created = time.Now().UTC()
	ss := newSession(s, rec)
	ss.remote = rs
	s.mu.Lock()
	if _, ok := s.sessions[rec.ID]; ok {
		s.mu.Unlock()
		return nil, openError{fmt.Errorf("session %s is already open", rec.ID)}
	}
	s.sessions[rec.ID] = ss
	delete(s.deleted, rec.ID)
	s.mu.Unlock()
	ss.attached()
	return ss, nil
}

// attached logs the session event of a remote session the server took
// on, and follows the turn of its record when that one has not ended.
func (s *session) attached() {
	s.mu.Lock()
	ev := sessionEvent{SessionEvent: streamjson.SessionEvent{Type: "session", SessionID: s.rec.ID, Tools: []string{}},
		Cwd: s.rec.Cwd, Note: "the session runs on the " + s.rec.Engine + " engine: the workers' agent, provider and model"}
	follow := s.rec.Turn > 0 && !s.rec.TurnEnded
	if follow {
		s.running, s.ended = true, false
		s.turns.Add(1)
	}
	s.mu.Unlock()
	s.logRemote(ev)
	if follow {
		go s.runRemoteTurns("", false)
	}
}

// errImages: a remote engine's turn takes text only.
var errImages = errors.New("images are not supported by the session's engine")

// sendRemote is send of a remote session (s.mu held).
func (s *session) sendRemoteLocked(text string, content []providers.ContentPart) (string, int64, error) {
	if len(content) > 1 {
		return "", 0, errImages
	}
	if s.running {
		s.queue = append(s.queue, queuedMessage{text: text, content: content})
		return serverclient.MessageQueued, s.log.add(queuedEvent{Type: "queued", Text: text, Position: len(s.queue)}), nil
	}
	s.running, s.ended = true, false
	seq := s.turnStartLocked(text)
	s.turns.Add(1)
	go s.runRemoteTurns(text, true)
	return serverclient.MessageStarted, seq, nil
}

// turnStartLocked logs a remote turn's turn_start (s.mu held), as
// logRemote logs.
func (s *session) turnStartLocked(text string) int64 {
	s.rec.LastSeq = s.log.last() + 1
	if s.rec.Interrupted {
		s.rec.Interrupted = false
	}
	s.srv.saveRecord(s.rec)
	return s.log.add(turnStartEvent{Type: "turn_start", Text: text})
}

// runRemoteTurns starts the turn of text (start) or follows the running
// one, then the queued messages' turns, until none is left or the session
// closes.
func (s *session) runRemoteTurns(text string, start bool) {
	defer s.turns.Done()
	for {
		if start {
			s.startRemote(text)
		}
		s.followRemote(!start)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		if len(s.queue) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		text, start = s.queue[0].text, true
		s.queue = s.queue[1:]
		s.ended = false
		s.turnStartLocked(text)
		s.mu.Unlock()
	}
}

// startRemote sends the turn of text (its turn_start is logged); on
// failure it logs its error and turn_end.
func (s *session) startRemote(text string) {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	ctx, cancel := s.remoteCtx()
	defer cancel()
	st, err := s.remote.Status(ctx)
	if err == nil {
		s.mu.Lock()
		s.rec.Turn, s.rec.TurnStart, s.rec.Seen, s.rec.TurnEnded = st.Turns+1, st.HistoryLen, st.HistoryLen, false
		s.rec.Cursor, s.rec.FeedStep, s.feedCalls = "", 0, map[string]bool{}
		rec := s.rec
		s.mu.Unlock()
		s.srv.saveRecord(rec)
	}
	if err == nil {
		err = s.remote.StartTurn(ctx, text)
	}
	if err != nil {
		s.mu.Lock()
		s.rec.TurnEnded, s.ended = true, true
		s.mu.Unlock()
		s.logRemote(remoteEnd(nil, err)...)
	}
}

// cancelRemoteLocked asks the engine to cancel the running turn (s.mu
// held); the turn's end is followed as any other.
func (s *session) cancelRemoteLocked() bool {
	id := s.rec.ID
	s.mu.Unlock()
	defer s.mu.Lock()
	ctx, cancel := s.remoteCtx()
	defer cancel()
	if err := s.remote.CancelTurn(ctx); err != nil {
		s.srv.logger.Warn("server: the session's engine did not take the cancel", "session", id, "error", err)
		return false
	}
	return true
}

// remoteCtx bounds a call to the engine; it ends when the session closes.
func (s *session) remoteCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		select {
		case <-s.stopFollow:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// followRemote follows the record's turn until it ends (its events are
// logged) or the session closes. attached: the server attached to the
// session; a turn the engine never took (the server that sent it stopped
// first) ends at once. A RemoteFeed's turn logs its events from its feed
// as they come; once the engine says the turn ended, the feed has
// feedGrace to end it before the history's events of what it did not
// show are logged, and the turn_end.
func (s *session) followRemote(attached bool) {
	var failing, ended time.Time
	feed, live := s.remote.(RemoteFeed)
	var stopFeed, feedDone chan struct{}
	if live {
		stopFeed, feedDone = make(chan struct{}), make(chan struct{})
		go s.followFeed(feed, stopFeed, feedDone)
	}
	endFeed := func() {
		if live {
			close(stopFeed)
			<-feedDone
			live = false
		}
	}
	defer endFeed()
	t := time.NewTicker(remotePoll)
	defer t.Stop()
	for {
		s.mu.Lock()
		done := s.rec.TurnEnded
		s.mu.Unlock()
		if done {
			return
		}
		ctx, cancel := s.remoteCtx()
		st, err := s.remote.Status(ctx)
		if err == nil && attached && !st.Busy && st.Turns < s.turnOf() {
			s.endRemote(fmt.Errorf("turn %d never reached the %s engine: the server that sent it stopped first", s.turnOf(), s.rec.Engine))
			cancel()
			return
		}
		attached = false
		if err == nil && live && st.Turns >= s.turnOf() && !st.Busy {
			if ended.IsZero() {
				ended = time.Now()
			}
			select {
			case <-feedDone:
				endFeed()
			default:
				if time.Since(ended) >= feedGrace {
					endFeed()
				}
			}
		}
		if err == nil {
			err = s.syncRemote(ctx, st, live)
		}
		cancel()
		switch {
		case err == nil:
			failing = time.Time{}
		case failing.IsZero():
			failing = time.Now()
			s.srv.logger.Warn("server: the session's engine does not answer", "session", s.rec.ID, "error", err)
		case time.Since(failing) > remoteGiveUp:
			s.endRemote(fmt.Errorf("the %s engine did not answer for %s: %w", s.rec.Engine, remoteGiveUp, err))
			return
		}
		select {
		case <-s.stopFollow:
			return
		case <-t.C:
		}
	}
}

// turnOf is the number of the followed turn.
func (s *session) turnOf() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Turn
}

// endRemote ends the followed turn with err.
func (s *session) endRemote(err error) {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	s.mu.Lock()
	s.rec.TurnEnded, s.ended = true, true
	s.mu.Unlock()
	s.dropRemotePending(RemoteStatus{})
	s.logRemote(remoteEnd(nil, err)...)
}

// syncRemote logs what changed in the followed turn: its new messages,
// its approval requests (and those answered elsewhere), its end. live:
// its feed logs its messages' events and its end.
func (s *session) syncRemote(ctx context.Context, st RemoteStatus, live bool) error {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	if rec.TurnEnded {
		return nil
	}
	ended := st.Turns >= rec.Turn && !st.Busy
	// The requests answered meanwhile come before what their answers
	// caused.
	if ended {
		s.dropRemotePending(RemoteStatus{})
	} else {
		s.dropRemotePending(st)
	}
	if live {
		if !ended {
			s.askRemoteAll(st)
		}
		return nil
	}
	if st.HistoryLen > rec.Seen {
		h, err := s.remote.History(ctx)
		if err != nil {
			return err
		}
		if len(h) > rec.Seen {
			evs := remoteEvents(h, rec.TurnStart, rec.Seen)
			if rec.Cursor != "" || rec.FeedStep > 0 {
				s.mu.Lock()
				evs = feedFallback(h, rec.TurnStart, rec.FeedStep, s.feedCalls)
				s.mu.Unlock()
			}
			s.mu.Lock()
			s.rec.Seen = len(h)
			s.mu.Unlock()
			s.logRemote(evs...)
		}
	}
	if ended {
		s.mu.Lock()
		s.rec.TurnEnded, s.ended = true, true
		s.mu.Unlock()
		s.logRemote(remoteEnd(st.Last, nil)...)
		return nil
	}
	s.askRemoteAll(st)
	return nil
}

// askRemoteAll logs the approval requests and questions of st not logged
// yet.
func (s *session) askRemoteAll(st RemoteStatus) {
	for _, req := range st.Pending {
		s.askRemote(req)
	}
	for _, req := range st.Questions {
		s.askRemoteQuestions(req)
	}
}

// questionsKey identifies the questions of a remote turn's call (a call
// may ask more than once); it starts as remoteKey does, with the call id.
func questionsKey(req approval.QuestionRequest) string {
	key := req.ToolCallID + "\x00" + kindQuestion
	for _, q := range req.Questions {
		key += "\x00" + q.Question
	}
	return key
}

// askRemoteQuestions logs a question_request of the followed turn, once:
// the first client's answer goes to the engine.
func (s *session) askRemoteQuestions(req approval.QuestionRequest) {
	id, ok := s.addRemotePending(kindQuestion, questionsKey(req), req.ToolCallID, func(ctx context.Context, a answer) error {
		return s.remote.AnswerQuestions(ctx, req.ToolCallID, a.questions)
	})
	if !ok {
		return
	}
	s.logRemote(questionRequestEvent{Type: "question_request", RequestID: id, ToolCallID: req.ToolCallID, Tool: req.ToolName, Questions: req.Questions})
}

// addRemotePending registers a request of the followed turn's call whose
// key is not logged yet (nor answered, nor its call ended): the first
// client's answer goes to the engine through send. ok: it is new.
func (s *session) addRemotePending(kind, key, callID string, send func(context.Context, answer) error) (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remoteAsked[key] != "" || s.remoteDone[key] || s.feedCalls[callID] {
		return "", false
	}
	s.reqSeq++
	id = kind + "-" + strconv.Itoa(s.reqSeq)
	s.pending[id] = pending{kind: kind, remote: func(a answer) error {
		ctx, cancel := s.remoteCtx()
		defer cancel()
		return send(ctx, a)
	}, key: key}
	s.remoteAsked[key] = id
	return id, true
}

// remoteKey identifies an approval request of a remote turn.
func remoteKey(req approval.Request) string { return req.ToolCallID + "\x00" + req.SessionKey() }

// askRemote logs an approval request of the followed turn, once: the
// first client's answer goes to the engine.
func (s *session) askRemote(req approval.Request) {
	id, ok := s.addRemotePending(kindApproval, remoteKey(req), req.ToolCallID, func(ctx context.Context, a answer) error {
		return s.remote.Answer(ctx, req.ToolCallID, a.approval, a.feedback)
	})
	if !ok {
		return
	}
	display := make([]displayBlock, 0, len(req.Display))
	for _, d := range req.Display {
		display = append(display, displayBlock{Kind: d.Kind, Data: jsonData(d.Data)})
	}
	s.logRemote(approvalRequestEvent{Type: "approval_request", RequestID: id, ToolCallID: req.ToolCallID, Plugin: req.Plugin,
		Tool: req.ToolName, Action: req.Action, Description: req.Description, Display: display})
}

// dropRemotePending forgets the requests no longer pending on the engine
// (answered elsewhere, or their turn ended): request_answered says so.
func (s *session) dropRemotePending(still RemoteStatus) {
	keep := map[string]bool{}
	for _, r := range still.Pending {
		keep[remoteKey(r)] = true
	}
	for _, r := range still.Questions {
		keep[questionsKey(r)] = true
	}
	s.logRemote(s.droppedRemote(func(key string) bool { return keep[key] })...)
}

// droppedRemote forgets the logged requests whose key keep refuses, and
// returns the request_answered events that say so.
func (s *session) droppedRemote(keep func(key string) bool) []any {
	var evs []any
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, id := range s.remoteAsked {
		if keep(key) {
			continue
		}
		delete(s.remoteAsked, key)
		s.remoteDone[key] = true
		if p, ok := s.pending[id]; ok {
			delete(s.pending, id)
			s.answered[id] = true
			evs = append(evs, requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: p.kind, Decision: decisionElsewhere})
		}
	}
	return evs
}

// answerRemote delivers a client's answer to a remote request p (taken
// out of s.pending, s.mu not held): the engine first, then the event.
func (s *session) answerRemote(id string, p pending, a answer, ev requestAnsweredEvent) (int64, error) {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	if err := p.remote(a); err != nil {
		if errors.Is(err, ErrNotPending) {
			s.mu.Lock()
			delete(s.remoteAsked, p.key)
			s.remoteDone[p.key] = true
			s.mu.Unlock()
			s.logRemote(requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: p.kind, Decision: decisionElsewhere})
			return 0, errAnswered
		}
		s.mu.Lock()
		s.pending[id] = p
		delete(s.answered, id)
		s.mu.Unlock()
		return 0, fmt.Errorf("%w: %s", errEngine, oneLine(err.Error()))
	}
	s.mu.Lock()
	delete(s.remoteAsked, p.key)
	s.remoteDone[p.key] = true
	s.mu.Unlock()
	return s.logRemote(ev), nil
}

// errEngine: the engine did not take an answer (503).
var errEngine = errors.New("the session's engine did not take the answer")

// closeRemote stops following a remote session; ending it is the
// caller's (a deleted session's).
func (s *session) closeRemote(reason string) record {
	close(s.stopFollow)
	s.turns.Wait()
	s.log.add(closedEvent{Type: "session_closed", Reason: reason})
	s.mu.Lock()
	s.rec.LastSeq = s.log.last()
	rec := s.rec
	s.mu.Unlock()
	s.log.close()
	return rec
}

// remoteHistory is a remote session's history.
func (s *session) remoteHistory(ctx context.Context) ([]providers.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.remote.History(ctx)
}

// notOnEngine explains why a remote session of the list cannot be used.
func notOnEngine(rec record) error {
	return fmt.Errorf("session %s runs on the %s engine: serve it with --engine %s", rec.ID, rec.Engine, strings.ToLower(rec.Engine))
}
