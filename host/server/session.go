package server

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/providers"
)

// The server's own events, beside the stream-json events of the loop
// (docs/server.md lists them).
type (
	turnStartEvent struct {
		Type   string `json:"type"` // "turn_start"
		Text   string `json:"text"`
		Images int    `json:"images"`
	}
	queuedEvent struct {
		Type     string `json:"type"` // "queued"
		Text     string `json:"text"`
		Position int    `json:"position"`
	}
	steerEvent struct {
		Type string `json:"type"` // "steer"
		Text string `json:"text"`
	}
	steeredEvent struct {
		Type  string   `json:"type"` // "steered"
		Step  int      `json:"step"`
		Texts []string `json:"texts"`
	}
	planModeEvent struct {
		Type string `json:"type"` // "plan_mode"
		On   bool   `json:"on"`
	}
	displayBlock struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	approvalRequestEvent struct {
		Type        string         `json:"type"` // "approval_request"
		RequestID   string         `json:"request_id"`
		ToolCallID  string         `json:"tool_call_id"`
		Plugin      string         `json:"plugin,omitempty"`
		Tool        string         `json:"tool"`
		Action      string         `json:"action"`
		Description string         `json:"description"`
		Display     []displayBlock `json:"display"`
	}
	questionRequestEvent struct {
		Type       string              `json:"type"` // "question_request"
		RequestID  string              `json:"request_id"`
		ToolCallID string              `json:"tool_call_id"`
		Tool       string              `json:"tool"`
		Questions  []approval.Question `json:"questions"`
	}
	requestAnsweredEvent struct {
		Type      string            `json:"type"` // "request_answered"
		RequestID string            `json:"request_id"`
		Kind      string            `json:"kind"` // approval or question
		Decision  string            `json:"decision,omitempty"`
		Feedback  string            `json:"feedback,omitempty"`
		Answers   map[string]string `json:"answers,omitempty"`
		Dismissed bool              `json:"dismissed,omitempty"`
	}
	cancelEvent struct {
		Type    string `json:"type"` // "cancel"
		Dropped int    `json:"dropped"`
	}
	closedEvent struct {
		Type   string `json:"type"` // "session_closed"
		Reason string `json:"reason"`
	}
	lostEvent struct {
		Type   string `json:"type"` // "events_lost"
		After  int64  `json:"after"`
		Oldest int64  `json:"oldest"`
	}
	errorEvent = streamjson.ErrorEvent
)

// The kinds of pending requests.
const (
	kindApproval = "approval"
	kindQuestion = "question"
)

// The reasons of session_closed.
const (
	closedDeleted  = "deleted"
	closedShutdown = "shutdown"
)

// answer is a client's answer to a pending request.
type answer struct {
	approval  approval.Answer
	feedback  string
	questions approval.Answers
}

type pending struct {
	kind string
	ch   chan answer
	// remote answers a remote session's request (key is its remoteKey).
	remote func(answer) error
	key    string
}

// queuedMessage is a message waiting for the running turn to end.
type queuedMessage struct {
	text    string
	content []providers.ContentPart
}

// session is one session of the server: open (conv set) or saved.
type session struct {
	srv *Server
	log *eventLog

	mu   sync.Mutex
	info serverclient.Session
	// rec is what the server's session list keeps of it.
	rec     record
	conv    *conversation.Conversation
	opening chan struct{} // closed once an opening ends
	running bool
	// ended: the running turn has ended (its turn_end is logged) and
	// only its saving is left; a cancel then has nothing to cancel.
	ended    bool
	queue    []queuedMessage
	pending  map[string]pending
	answered map[string]bool
	reqSeq   int
	closed   bool
	turns    sync.WaitGroup

	// remote is the session of a Remote engine (conv is nil then);
	// followMu orders what its follower and its answers log; stopFollow
	// is closed when the session closes; remoteAsked are its logged
	// requests (request id by remoteKey), remoteDone those answered.
	remote      RemoteSession
	followMu    sync.Mutex
	stopFollow  chan struct{}
	remoteAsked map[string]string
	remoteDone  map[string]bool
	// feedCalls are the calls of the followed turn whose tool_result its
	// live feed logged.
	feedCalls map[string]bool
}

func newSession(srv *Server, rec record) *session {
	return &session{srv: srv, rec: rec, log: newEventLog(rec.LastSeq+1, srv.cfg.LogEvents),
		pending: map[string]pending{}, answered: map[string]bool{},
		stopFollow: make(chan struct{}), remoteAsked: map[string]string{}, remoteDone: map[string]bool{},
		feedCalls: map[string]bool{}}
}

// Observe records a loop event in the log.
func (s *session) Observe(e loop.Event) {
	switch e := e.(type) {
	case loop.Steered:
		s.log.add(steeredEvent{Type: "steered", Step: e.Step, Texts: e.Texts})
		return
	case loop.PlanModeChanged:
		s.log.add(planModeEvent{Type: "plan_mode", On: e.On})
		return
	case loop.TurnEnded, loop.TurnFailed:
		// Before the event is logged: a client that reads turn_end and
		// cancels is told nothing was cancelled.
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
	}
	if v := streamjson.FromLoop(e); v != nil {
		s.log.add(v)
	}
}

// addPending registers a request waiting for a client's answer.
func (s *session) addPending(kind string) (string, chan answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqSeq++
	id := kind + "-" + strconv.Itoa(s.reqSeq)
	ch := make(chan answer, 1)
	s.pending[id] = pending{kind: kind, ch: ch}
	return id, ch
}

// dropPending forgets a request nobody answered (its turn ended); false
// when a client answered it meanwhile.
func (s *session) dropPending(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; !ok {
		return false
	}
	delete(s.pending, id)
	s.answered[id] = true
	return true
}

// ask is the session's approval.Asker: an approval_request event, then
// the first client's answer.
func (s *session) ask(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	id, ch := s.addPending(kindApproval)
	display := make([]displayBlock, 0, len(req.Display))
	for _, d := range req.Display {
		display = append(display, displayBlock{Kind: d.Kind, Data: jsonData(d.Data)})
	}
	s.log.add(approvalRequestEvent{Type: "approval_request", RequestID: id, ToolCallID: req.ToolCallID, Plugin: req.Plugin,
		Tool: req.ToolName, Action: req.Action, Description: req.Description, Display: display})
	select {
	case a := <-ch:
		return a.approval, a.feedback, nil
	case <-ctx.Done():
		if s.dropPending(id) {
			s.log.add(requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: kindApproval, Decision: "cancelled"})
			return approval.Reject, "", ctx.Err()
		}
		a := <-ch
		return a.approval, a.feedback, nil
	}
}

// jsonData is a display block's data as JSON (a JSON string when it is
// not JSON).
func jsonData(data json.RawMessage) json.RawMessage {
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data))
	}
	return data
}

// askQuestions is the session's approval.UserInput.
func (s *session) askQuestions(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
	id, ch := s.addPending(kindQuestion)
	qs := req.Questions
	if qs == nil {
		qs = []approval.Question{}
	}
	s.log.add(questionRequestEvent{Type: "question_request", RequestID: id, ToolCallID: req.ToolCallID, Tool: req.ToolName, Questions: qs})
	select {
	case a := <-ch:
		return a.questions, nil
	case <-ctx.Done():
		if s.dropPending(id) {
			s.log.add(requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: kindQuestion, Dismissed: true})
			return approval.Answers{Dismissed: true}, ctx.Err()
		}
		return (<-ch).questions, nil
	}
}

// errAnswered: the request was answered already (409); errNoRequest: no
// such request (404).
var (
	errAnswered  = errors.New("this request was answered already")
	errNoRequest = errors.New("no such request is waiting")
)

// answer delivers a client's answer to request id of kind; the first
// answer wins.
func (s *session) answer(id, kind string, a answer, ev requestAnsweredEvent) (int64, error) {
	s.mu.Lock()
	p, ok := s.pending[id]
	if !ok || p.kind != kind {
		done := s.answered[id]
		s.mu.Unlock()
		if done {
			return 0, errAnswered
		}
		return 0, errNoRequest
	}
	delete(s.pending, id)
	s.answered[id] = true
	if p.remote != nil {
		s.mu.Unlock()
		return s.answerRemote(id, p, a, ev)
	}
	// Logged before the turn goes on, so that every client sees the
	// answer before what it caused.
	seq := s.log.add(ev)
	s.mu.Unlock()
	p.ch <- a
	return seq, nil
}

// snapshot is the session as the API shows it.
func (s *session) snapshot() serverclient.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.info
	info.ID, info.Cwd, info.Agent, info.AgentFile, info.Mode, info.Created, info.Interrupted =
		s.rec.ID, s.rec.Cwd, s.rec.Agent, s.rec.AgentFile, s.rec.Mode, s.rec.Created, s.rec.Interrupted
	if info.Model == "" {
		info.Model = s.rec.Model
	}
	info.LastSeq = s.log.last()
	info.Engine = s.rec.Engine
	info.Queued = len(s.queue)
	info.Pending = make([]string, 0, len(s.pending))
	for id := range s.pending {
		info.Pending = append(info.Pending, id)
	}
	sortStrings(info.Pending)
	switch {
	case s.conv == nil && s.remote == nil:
		info.Status = serverclient.StatusSaved
	case s.running:
		info.Status = serverclient.StatusRunning
	default:
		info.Status = serverclient.StatusIdle
	}
	return info
}

// errClosed: the session was closed (deleted, or the server stops).
var errClosed = errors.New("the session is closed")

// send takes a message: it starts a turn, queues behind the running one,
// or steers it.
func (s *session) send(text string, content []providers.ContentPart, steer bool) (string, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (s.conv == nil && s.remote == nil) {
		return "", 0, errClosed
	}
	if s.remote != nil {
		return s.sendRemoteLocked(text, content)
	}
	if s.running {
		if steer && len(content) == 1 && s.conv.Steer(text) {
			return serverclient.MessageSteered, s.log.add(steerEvent{Type: "steer", Text: text}), nil
		}
		s.queue = append(s.queue, queuedMessage{text: text, content: content})
		return serverclient.MessageQueued, s.log.add(queuedEvent{Type: "queued", Text: text, Position: len(s.queue)}), nil
	}
	s.running, s.ended = true, false
	if s.rec.Interrupted {
		s.rec.Interrupted = false
		s.srv.saveRecord(s.rec)
	}
	seq := s.log.add(turnStartEvent{Type: "turn_start", Text: text, Images: len(content) - 1})
	s.turns.Add(1)
	go s.runTurns(content)
	return serverclient.MessageStarted, seq, nil
}

// runTurns runs the turn of content, then the queued messages' turns.
func (s *session) runTurns(content []providers.ContentPart) {
	defer s.turns.Done()
	for content != nil {
		_, err := s.conv.TurnContent(s.srv.ctx, content)
		if errors.Is(err, conversation.ErrNotSaved) {
			s.log.add(errorEvent{Type: "error", Error: err.Error()})
			s.srv.logger.Error("server: session not saved", "session", s.rec.ID, "error", err)
		}
		s.mu.Lock()
		content = nil
		if len(s.queue) > 0 && !s.closed {
			next := s.queue[0]
			s.queue = s.queue[1:]
			content = next.content
			s.ended = false
			s.log.add(turnStartEvent{Type: "turn_start", Text: next.text, Images: len(next.content) - 1})
		} else {
			s.running = false
		}
		s.rec.LastSeq = s.log.last()
		rec := s.rec
		s.mu.Unlock()
		s.srv.saveRecord(rec)
	}
}

// cancel cancels the running turn and drops the queue.
func (s *session) cancel() serverclient.Cancelled {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := len(s.queue)
	s.queue = nil
	ok := s.conv != nil && !s.ended && s.conv.Cancel()
	if s.remote != nil && s.running && !s.ended {
		ok = s.cancelRemoteLocked()
	}
	if ok || dropped > 0 {
		s.log.add(cancelEvent{Type: "cancel", Dropped: dropped})
	}
	return serverclient.Cancelled{Cancelled: ok, Dropped: dropped}
}

// close cancels the running turn (marking it interrupted when
// markInterrupted), waits for it to end and its history to be saved,
// closes the conversation and ends the event log.
func (s *session) close(reason string, markInterrupted bool) record {
	s.mu.Lock()
	if s.closed {
		rec := s.rec
		s.mu.Unlock()
		return rec
	}
	s.closed = true
	s.queue = nil
	if s.remote != nil {
		// The running turn goes on on the engine.
		s.mu.Unlock()
		return s.closeRemote(reason)
	}
	if markInterrupted && s.running {
		s.rec.Interrupted = true
	}
	conv := s.conv
	s.mu.Unlock()
	if conv != nil {
		conv.Cancel()
		s.turns.Wait()
		conv.Close()
	}
	s.log.add(closedEvent{Type: "session_closed", Reason: reason})
	s.mu.Lock()
	s.rec.LastSeq = s.log.last()
	rec := s.rec
	s.mu.Unlock()
	s.log.close()
	return rec
}

// history is the saved conversation as the API shows it.
func historyOf(msgs []providers.Message) serverclient.History {
	out := serverclient.History{Messages: make([]serverclient.HistoryMessage, 0, len(msgs))}
	for _, m := range msgs {
		hm := serverclient.HistoryMessage{Role: string(m.Role), Text: m.Text(), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			hm.ToolCalls = append(hm.ToolCalls, serverclient.HistoryCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out.Messages = append(out.Messages, hm)
	}
	return out
}
