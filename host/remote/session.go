// Package remote is a session of a kosong-host server (`kosong-host
// serve`, docs/server.md) seen as a conversation, for the front ends that
// attach to one: the terminal (host/repl, `run --server`) and the ACP
// bridge (host/frontend/acp, `acp --server`). The server runs the turns;
// the session's events arrive over its event stream (host/serverclient),
// turned back into loop events for the front end's observer. The server's
// approval and question requests are asked through the front end's own
// Asker and UserInput and the answers sent back; when another client
// answers first, the question is withdrawn and the front end told who
// decided. Closing a Session detaches: the session goes on in the server.
package remote

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers"
)

// Config configures Attach.
type Config struct {
	Client *serverclient.Client
	// ID is the server's session.
	ID string
	// After replays the events after this sequence number (0: every event
	// the server holds).
	After int64
	// Observer receives the session's events as loop events.
	Observer loop.Observer
	// Ask answers approval requests; nil leaves them to other clients.
	Ask approval.Asker
	// Questions answers question requests; nil leaves them to other
	// clients.
	Questions approval.UserInput
	// Notice is told, in one line, what the loop has no event for: a
	// message another client sent, a cancel, a request answered elsewhere,
	// the session closed. Nil drops them.
	Notice func(text string)
}

// ErrClosed ends a turn whose session was closed in the server (deleted,
// or the server stopped) or whose event stream ended.
var ErrClosed = errors.New("the session was closed in the server")

// Session is an attached server session. Its methods are safe for
// concurrent use.
type Session struct {
	cfg  Config
	info serverclient.Session

	stream *serverclient.Stream
	stop   context.CancelFunc
	done   chan struct{} // closed when the stream ends

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each change below
	plan    bool
	// starts are the turn_start sequence numbers, ends the results of
	// the turns that ended, by their turn_start's.
	current int64
	ends    map[int64]turnEnd
	// starts maps a queued message's seq to its turn's turn_start seq.
	queued  []queuedMessage
	starts  map[int64]int64
	asks    map[string]context.CancelFunc // requests being asked here
	mine    map[string]bool               // requests answered here
	closed  error
	replay  int64 // events up to this seq were sent before attaching
	pending map[string]bool
	// sending counts the messages being sent by their text, own the
	// turn_start seqs of the turns started here: their message is not
	// echoed back.
	sending map[string]int
	own     map[int64]bool
}

// queuedMessage is a message of this client waiting for its turn.
type queuedMessage struct {
	seq  int64
	text string
}

type turnEnd struct {
	res loop.TurnResult
	err error
}

// Attach attaches to session cfg.ID: it reads the session, opens its
// event stream after cfg.After and starts relaying the events.
func Attach(ctx context.Context, cfg Config) (*Session, error) {
	info, err := cfg.Client.Session(ctx, cfg.ID)
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(context.Background())
	stream, err := cfg.Client.Events(sctx, cfg.ID, cfg.After)
	if err != nil {
		stop()
		return nil, err
	}
	if cfg.Observer == nil {
		cfg.Observer = loop.ObserverFunc(func(loop.Event) {})
	}
	if cfg.Notice == nil {
		cfg.Notice = func(string) {}
	}
	s := &Session{cfg: cfg, info: info, stream: stream, stop: stop, done: make(chan struct{}), changed: make(chan struct{}),
		plan: info.Mode == serverclient.ModePlan, ends: map[int64]turnEnd{}, starts: map[int64]int64{},
		asks: map[string]context.CancelFunc{}, mine: map[string]bool{}, replay: info.LastSeq, pending: map[string]bool{},
		sending: map[string]int{}, own: map[int64]bool{}}
	for _, id := range info.Pending {
		s.pending[id] = true
	}
	go s.relay(sctx)
	return s, nil
}

// Info is the session as the server showed it when attaching.
func (s *Session) Info() serverclient.Session { return s.info }

// ID is the session's id.
func (s *Session) ID() string { return s.info.ID }

// WorkDir is the session's folder in the server.
func (s *Session) WorkDir() string { return s.info.Cwd }

// TakesImages is true: the server decides what the model takes.
func (s *Session) TakesImages() bool { return true }

// PlanMode says whether the session is in plan mode.
func (s *Session) PlanMode() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plan
}

// Close detaches: the event stream stops, questions asked here are
// withdrawn; the session goes on in the server.
func (s *Session) Close() {
	s.stop()
	<-s.done
}

// Done is closed when the event stream ends (Close, or the session closed
// in the server).
func (s *Session) Done() <-chan struct{} { return s.done }

// Cancel cancels the session's running turn; false when none ran.
func (s *Session) Cancel() bool {
	c, err := s.cfg.Client.Cancel(context.Background(), s.info.ID)
	return err == nil && c.Cancelled
}

// Steer sends text into the running turn; false when none runs (or the
// server could not be reached).
func (s *Session) Steer(text string) bool {
	a, err := s.cfg.Client.Send(context.Background(), s.info.ID, serverclient.Message{Text: text, Steer: true})
	return err == nil && a.Status != serverclient.MessageStarted
}

// message is the API message of content: its text parts joined, its
// images (data URLs) as base64 images.
func message(content []providers.ContentPart) (serverclient.Message, error) {
	var m serverclient.Message
	var texts []string
	for _, p := range content {
		switch p.Type {
		case providers.PartImage:
			media, data, ok := strings.Cut(strings.TrimPrefix(p.ImageURL, "data:"), ";base64,")
			if !ok || !strings.HasPrefix(p.ImageURL, "data:") {
				return m, errors.New("an image must be sent as data, not as a URL")
			}
			if _, err := base64.StdEncoding.DecodeString(data); err != nil {
				return m, fmt.Errorf("an image is not base64: %v", err)
			}
			m.Images = append(m.Images, serverclient.Image{MimeType: media, Data: data})
		default:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
	}
	m.Text = strings.Join(texts, "\n\n")
	return m, nil
}

// TurnContent sends the message and returns when its turn ends (a message
// sent during another client's turn waits for it, queued). ctx's end
// cancels the turn in the server; TurnContent then waits for it to wind
// down, as a turn of this process does.
func (s *Session) TurnContent(ctx context.Context, content []providers.ContentPart) (loop.TurnResult, error) {
	m, err := message(content)
	if err != nil {
		return loop.TurnResult{Reason: loop.StopError}, err
	}
	s.mu.Lock()
	s.sending[m.Text]++
	s.mu.Unlock()
	a, err := s.cfg.Client.Send(ctx, s.info.ID, m)
	s.mu.Lock()
	if s.sending[m.Text]--; s.sending[m.Text] == 0 {
		delete(s.sending, m.Text)
	}
	switch {
	case err != nil:
	case a.Status == serverclient.MessageQueued:
		s.queued = append(s.queued, queuedMessage{a.Seq, m.Text})
	case a.Status == serverclient.MessageStarted:
		s.own[a.Seq] = true
	}
	s.mu.Unlock()
	if err != nil {
		return loop.TurnResult{Reason: loop.StopError}, err
	}
	cancelled := false
	for {
		s.mu.Lock()
		start, ok := a.Seq, a.Status == serverclient.MessageStarted
		if !ok {
			start, ok = s.starts[a.Seq]
		}
		end, ended := s.ends[start]
		closed, changed := s.closed, s.changed
		s.mu.Unlock()
		switch {
		case ok && ended:
			if cancelled {
				end.res.Reason = loop.StopCancelled
			}
			return end.res, end.err
		case closed != nil:
			return loop.TurnResult{Reason: loop.StopError}, closed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				// Cancel the turn (and this message, if still queued).
				_, _ = s.cfg.Client.Cancel(context.Background(), s.info.ID)
				if !ok {
					return loop.TurnResult{Reason: loop.StopCancelled}, ctx.Err()
				}
			}
			ctx = context.Background()
		}
	}
}

// The server's own events the relay reads (docs/server.md).
type (
	turnStartEvent struct {
		Text string `json:"text"`
	}
	textEvent struct {
		Text string `json:"text"`
	}
	steeredEvent struct {
		Step  int      `json:"step"`
		Texts []string `json:"texts"`
	}
	planModeEvent struct {
		On bool `json:"on"`
	}
	approvalRequestEvent struct {
		RequestID   string `json:"request_id"`
		ToolCallID  string `json:"tool_call_id"`
		Plugin      string `json:"plugin"`
		Tool        string `json:"tool"`
		Action      string `json:"action"`
		Description string `json:"description"`
		Display     []struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		} `json:"display"`
	}
	questionRequestEvent struct {
		RequestID  string              `json:"request_id"`
		ToolCallID string              `json:"tool_call_id"`
		Tool       string              `json:"tool"`
		Questions  []approval.Question `json:"questions"`
	}
	requestAnsweredEvent struct {
		RequestID string            `json:"request_id"`
		Kind      string            `json:"kind"`
		Decision  string            `json:"decision"`
		Feedback  string            `json:"feedback"`
		Answers   map[string]string `json:"answers"`
		Dismissed bool              `json:"dismissed"`
	}
	cancelEvent struct {
		Dropped int `json:"dropped"`
	}
	closedEvent struct {
		Reason string `json:"reason"`
	}
	lostEvent struct {
		After  int64 `json:"after"`
		Oldest int64 `json:"oldest"`
	}
)

// changedLocked wakes the turns waiting for an event; s.mu is held.
func (s *Session) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// relay reads the events until the stream ends.
func (s *Session) relay(ctx context.Context) {
	var asks sync.WaitGroup
	defer func() {
		s.mu.Lock()
		for _, cancel := range s.asks {
			cancel()
		}
		s.mu.Unlock()
		asks.Wait()
		s.stream.Close()
		close(s.done)
	}()
	for {
		ev, err := s.stream.Next()
		if err != nil {
			s.mu.Lock()
			if s.closed == nil {
				s.closed = ErrClosed
				if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					s.closed = fmt.Errorf("%w: %v", ErrClosed, err)
				}
			}
			s.changedLocked()
			s.mu.Unlock()
			return
		}
		s.handle(ctx, ev, &asks)
	}
}

// handle relays one event.
func (s *Session) handle(ctx context.Context, ev serverclient.Event, asks *sync.WaitGroup) {
	live := ev.Seq > s.replay
	switch ev.Type {
	case "turn_start":
		var e turnStartEvent
		_ = ev.Decode(&e)
		s.mu.Lock()
		s.current = ev.Seq
		own := s.own[ev.Seq] || s.sending[e.Text] > 0
		for i, q := range s.queued {
			if !own && q.text == e.Text {
				// The turn of a message queued here.
				s.starts[q.seq] = ev.Seq
				s.queued = append(s.queued[:i], s.queued[i+1:]...)
				own = true
				break
			}
		}
		s.changedLocked()
		s.mu.Unlock()
		if !own || !live {
			s.cfg.Notice("> " + e.Text)
		}
	case "turn_end":
		if e, ok := ToLoop(ev.Type, ev.Data); ok {
			s.cfg.Observer.Observe(e)
			end := e.(loop.TurnEnded)
			s.mu.Lock()
			s.ends[s.current] = turnEnd{res: loop.TurnResult{Steps: end.Steps, Usage: end.Usage, Reason: end.Reason, ModelStop: end.ModelStop}, err: end.Err}
			s.changedLocked()
			s.mu.Unlock()
		}
	case "queued":
		var e textEvent
		_ = ev.Decode(&e)
		s.cfg.Notice("(queued for after the running turn: " + oneLine(e.Text) + ")")
	case "steer":
		var e textEvent
		_ = ev.Decode(&e)
		s.cfg.Notice("(sent into the running turn: " + oneLine(e.Text) + ")")
	case "steered":
		var e steeredEvent
		if ev.Decode(&e) == nil {
			s.cfg.Observer.Observe(loop.Steered{Step: e.Step, Texts: e.Texts})
		}
	case "plan_mode":
		var e planModeEvent
		if ev.Decode(&e) == nil {
			s.mu.Lock()
			s.plan = e.On
			s.mu.Unlock()
			s.cfg.Observer.Observe(loop.PlanModeChanged{On: e.On})
		}
	case "cancel":
		s.cfg.Notice("(the turn was cancelled)")
	case "session_closed":
		var e closedEvent
		_ = ev.Decode(&e)
		s.mu.Lock()
		s.closed = fmt.Errorf("%w (%s)", ErrClosed, e.Reason)
		s.changedLocked()
		s.mu.Unlock()
		s.cfg.Notice("(the session was closed in the server: " + e.Reason + ")")
	case "events_lost":
		var e lostEvent
		_ = ev.Decode(&e)
		s.cfg.Notice(fmt.Sprintf("(the server no longer holds events %d to %d: they are not shown)", e.After+1, e.Oldest-1))
	case "approval_request":
		var e approvalRequestEvent
		if ev.Decode(&e) != nil || s.cfg.Ask == nil || (!live && !s.pending[e.RequestID]) {
			return
		}
		req := approval.Request{ToolCallID: e.ToolCallID, Plugin: e.Plugin, ToolName: e.Tool, Action: e.Action, Description: e.Description}
		for _, d := range e.Display {
			req.Display = append(req.Display, approval.Display{Kind: d.Kind, Data: d.Data})
		}
		s.ask(ctx, e.RequestID, asks, func(ctx context.Context) error {
			answer, feedback, err := s.cfg.Ask(ctx, req)
			if err != nil {
				return err
			}
			_, err = s.cfg.Client.AnswerApproval(context.Background(), s.info.ID, e.RequestID,
				serverclient.ApprovalAnswer{Decision: decision(answer), Feedback: feedback})
			return err
		})
	case "question_request":
		var e questionRequestEvent
		if ev.Decode(&e) != nil || s.cfg.Questions == nil || (!live && !s.pending[e.RequestID]) {
			return
		}
		s.ask(ctx, e.RequestID, asks, func(ctx context.Context) error {
			a, err := s.cfg.Questions.Ask(ctx, approval.QuestionRequest{ToolCallID: e.ToolCallID, ToolName: e.Tool, Questions: e.Questions})
			if err != nil {
				return err
			}
			_, err = s.cfg.Client.AnswerQuestion(context.Background(), s.info.ID, e.RequestID,
				serverclient.QuestionAnswer{Answers: a.Answers, Dismissed: a.Dismissed})
			return err
		})
	case "request_answered":
		var e requestAnsweredEvent
		if ev.Decode(&e) != nil {
			return
		}
		s.mu.Lock()
		cancel, asking := s.asks[e.RequestID]
		mine := s.mine[e.RequestID]
		s.mu.Unlock()
		if asking {
			cancel()
		}
		if !mine && live {
			s.cfg.Notice("(" + answeredText(e) + ")")
		}
	default:
		if e, ok := ToLoop(ev.Type, ev.Data); ok {
			s.cfg.Observer.Observe(e)
		}
	}
}

// ask asks request id here, with a context its answer elsewhere cancels.
func (s *Session) ask(ctx context.Context, id string, wg *sync.WaitGroup, f func(ctx context.Context) error) {
	actx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.asks[id] = cancel
	s.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		err := f(actx)
		s.mu.Lock()
		delete(s.asks, id)
		if err == nil {
			s.mine[id] = true
		}
		s.mu.Unlock()
		switch {
		case err == nil, actx.Err() != nil:
		case serverclient.IsCode(err, serverclient.CodeConflict):
			s.cfg.Notice("(another client answered first; this answer was not taken)")
		default:
			s.cfg.Notice("(the answer did not reach the server: " + err.Error() + ")")
		}
	}()
}

// decision is the API decision of an answer.
func decision(a approval.Answer) string {
	switch a {
	case approval.Approve:
		return serverclient.DecisionOnce
	case approval.ApproveForSession:
		return serverclient.DecisionSession
	}
	return serverclient.DecisionReject
}

// answeredText says how another client answered a request.
func answeredText(e requestAnsweredEvent) string {
	switch {
	case e.Kind == "question" && e.Dismissed:
		return "the question was dismissed by another client"
	case e.Kind == "question":
		return "the question was answered by another client"
	case e.Decision == "cancelled":
		return "the approval request was withdrawn: its turn ended"
	case e.Decision == serverclient.DecisionOnce:
		return "approved once by another client"
	case e.Decision == serverclient.DecisionSession:
		return "approved for the session by another client"
	case e.Feedback != "":
		return "rejected by another client: " + e.Feedback
	}
	return "rejected by another client"
}

// oneLine is text on one line, cut to 80 characters.
func oneLine(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if r := []rune(t); len(r) > 80 {
		t = string(r[:79]) + "…"
	}
	return t
}
