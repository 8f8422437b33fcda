package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/serverclient"
	savedsession "github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/providers"
)

// Handler is the server's HTTP handler: /healthz, the API under /v1 and
// the page (Config.Page).
func (s *Server) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/openapi.json", s.openapi)
	api.HandleFunc("POST /v1/sessions", s.createSession)
	api.HandleFunc("GET /v1/sessions", s.listSessions)
	api.HandleFunc("GET /v1/sessions/{id}", s.getSession)
	api.HandleFunc("DELETE /v1/sessions/{id}", s.deleteSession)
	api.HandleFunc("POST /v1/sessions/{id}/messages", s.postMessage)
	api.HandleFunc("POST /v1/sessions/{id}/cancel", s.cancelTurn)
	api.HandleFunc("GET /v1/sessions/{id}/events", s.events)
	api.HandleFunc("GET /v1/sessions/{id}/history", s.history)
	api.HandleFunc("POST /v1/sessions/{id}/approvals/{request_id}", s.answerApproval)
	api.HandleFunc("POST /v1/sessions/{id}/questions/{request_id}", s.answerQuestion)
	api.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		if allow := allowedMethods(api, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, serverclient.CodeMethod,
				fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
			return
		}
		writeError(w, http.StatusNotFound, serverclient.CodeNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	authed := s.authenticate(http.NewCrossOriginProtection().Handler(s.limitBody(api)))
	return s.checkHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
			if r.Method != http.MethodGet {
				writeError(w, http.StatusMethodNotAllowed, serverclient.CodeMethod, "use GET /healthz")
				return
			}
			writeJSON(w, http.StatusOK, serverclient.Health{Status: "ok", Version: s.cfg.Version})
		case strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/v1":
			authed.ServeHTTP(w, r)
		case s.cfg.Page != nil:
			s.cfg.Page.ServeHTTP(w, r)
		default:
			writeError(w, http.StatusNotFound, serverclient.CodeNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
		}
	}))
}

// allowedMethods lists the methods the API answers on r's path, when r
// reached the catch-all with another one: a wrong method on a known path
// is a 405 naming the right ones, not a 404.
func allowedMethods(api *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := api.Handler(probe); pattern != "/v1/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// checkHost refuses a Host header that is not a loopback host when the
// server listens on loopback (Config.CheckHost): a web page of another
// site whose name resolves to 127.0.0.1 (DNS rebinding) does not reach it.
func (s *Server) checkHost(next http.Handler) http.Handler {
	if !s.cfg.CheckHost {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			writeError(w, http.StatusForbidden, serverclient.CodeBadHost,
				fmt.Sprintf("the Host header %q is not a loopback host this server answers to", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost: host (HOST[:PORT]) is localhost or a loopback address.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// tokenParams are query parameters that would carry a token.
var tokenParams = []string{"token", "access_token", "auth", "bearer", "api_key", "key"}

// authenticate lets through requests with the bearer token. A token in
// the query string is refused even when right: URLs end up in logs,
// histories and Referer headers.
func (s *Server) authenticate(next http.Handler) http.Handler {
	want := []byte(s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for _, p := range tokenParams {
			if q.Has(p) {
				writeError(w, http.StatusBadRequest, serverclient.CodeTokenInQuery,
					fmt.Sprintf("a token in the query string (%s=) is refused: send it as the header Authorization: Bearer TOKEN", p))
				return
			}
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kosong-host"`)
			msg := "missing bearer token: send the header Authorization: Bearer TOKEN"
			if ok {
				msg = "wrong bearer token"
			}
			writeError(w, http.StatusUnauthorized, serverclient.CodeUnauthorized, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, serverclient.CodeTooLarge,
				fmt.Sprintf("the request body of %d bytes is over the limit of %d", r.ContentLength, s.cfg.MaxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, serverclient.ErrorBody{Error: serverclient.ErrorDetail{Code: code, Message: msg}})
}

// decode reads a JSON body into v: unknown fields and trailing data are
// refused, naming what is wrong; false after the error answer is written.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	if err == nil {
		return true
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, serverclient.CodeTooLarge,
			fmt.Sprintf("the request body is over the limit of %d bytes", mbe.Limit))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "the request body is empty: send a JSON object")
	default:
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "invalid request body: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	return false
}

// lookup finds the session of the path's {id}; false after the error
// answer is written (404 unknown, 410 deleted).
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*session, bool) {
	id := r.PathValue("id")
	s.mu.Lock()
	ss, ok := s.sessions[id]
	deleted := s.deleted[id]
	s.mu.Unlock()
	switch {
	case ok:
		return ss, true
	case deleted:
		writeError(w, http.StatusGone, serverclient.CodeGone, fmt.Sprintf("session %s was deleted", id))
	default:
		writeError(w, http.StatusNotFound, serverclient.CodeNotFound, fmt.Sprintf("unknown session %q", id))
	}
	return nil, false
}

func (s *Server) shuttingDown(w http.ResponseWriter) bool {
	s.mu.Lock()
	d := s.draining
	s.mu.Unlock()
	if d {
		writeError(w, http.StatusServiceUnavailable, serverclient.CodeShuttingDown, "the server is shutting down")
	}
	return d
}

func validMode(m string) bool {
	switch m {
	case "", serverclient.ModeAsk, serverclient.ModeYolo, serverclient.ModePlan:
		return true
	}
	return false
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req serverclient.CreateSession
	if !s.decode(w, r, &req) {
		return
	}
	switch {
	case req.Cwd == "":
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "cwd is required: the session's work dir, an absolute path")
		return
	case !filepath.IsAbs(req.Cwd):
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("cwd %q is not an absolute path", req.Cwd))
		return
	case !validMode(req.Mode):
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("invalid mode %q: use ask, yolo or plan", req.Mode))
		return
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("cwd %s is not a folder", req.Cwd))
		return
	}
	if req.Mode == "" {
		req.Mode = s.cfg.DefaultMode
	}
	if req.Resume != "" {
		s.mu.Lock()
		ss, ok := s.sessions[req.Resume]
		s.mu.Unlock()
		if ok {
			if err := s.reopen(r.Context(), ss); err != nil {
				s.openError(w, err)
				return
			}
			writeJSON(w, http.StatusOK, ss.snapshot())
			return
		}
	}
	rec := record{Cwd: filepath.Clean(req.Cwd), AgentRequested: req.Agent, Model: req.Model, Mode: req.Mode, ID: req.Resume}
	open := s.open
	if s.cfg.Remote != nil {
		open = func(ctx context.Context, rec record, _ bool) (*session, error) { return s.openRemote(ctx, rec) }
	}
	ss, err := open(r.Context(), rec, true)
	if err != nil {
		s.openError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, ss.snapshot())
}

// Errors of opening a session.
var (
	errTooMany  = errors.New("too many sessions")
	errDraining = errors.New("the server is shutting down")
)

type openError struct{ err error }

func (e openError) Error() string { return e.err.Error() }

func (s *Server) openError(w http.ResponseWriter, err error) {
	var oe openError
	switch {
	case errors.Is(err, errTooMany):
		writeError(w, http.StatusTooManyRequests, serverclient.CodeTooMany,
			fmt.Sprintf("the server has %d open sessions, its limit (--max-sessions): delete one first", s.cfg.MaxSessions))
	case errors.Is(err, errDraining):
		writeError(w, http.StatusServiceUnavailable, serverclient.CodeShuttingDown, "the server is shutting down")
	case errors.As(err, &oe):
		writeError(w, http.StatusUnprocessableEntity, serverclient.CodeOpenFailed, oneLine(oe.err.Error()))
	default:
		writeError(w, http.StatusInternalServerError, "internal", oneLine(err.Error()))
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// reserve takes a slot of the session limit; release gives it back.
func (s *Server) reserve() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return errDraining
	}
	if s.openCountLocked() >= s.cfg.MaxSessions {
		return errTooMany
	}
	s.opening++
	return nil
}

func (s *Server) release() {
	s.mu.Lock()
	s.opening--
	s.mu.Unlock()
}

// open opens a new session (or a saved one, rec.ID set) and registers it.
func (s *Server) open(ctx context.Context, rec record, isNew bool) (*session, error) {
	if err := s.reserve(); err != nil {
		return nil, err
	}
	defer s.release()
	ss := newSession(s, rec)
	if err := s.openInto(ctx, ss); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if old, ok := s.sessions[ss.rec.ID]; ok && old != ss {
		// A saved session resumed by id: keep the log its readers wait on.
		s.mu.Unlock()
		return nil, openError{fmt.Errorf("session %s is already open", ss.rec.ID)}
	}
	s.sessions[ss.rec.ID] = ss
	delete(s.deleted, ss.rec.ID)
	s.mu.Unlock()
	s.saveRecord(ss.rec)
	return ss, nil
}

// reopen opens a saved session of the list again (its next message, or a
// create with resume).
func (s *Server) reopen(ctx context.Context, ss *session) error {
	ss.mu.Lock()
	if ss.conv != nil || ss.remote != nil || ss.closed {
		ss.mu.Unlock()
		if ss.closed {
			return errDraining
		}
		return nil
	}
	if ss.opening != nil {
		ch := ss.opening
		ss.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		return s.reopen(ctx, ss)
	}
	switch {
	case ss.rec.Engine != "":
		err := notOnEngine(ss.rec)
		ss.mu.Unlock()
		return openError{err}
	case s.cfg.Open == nil:
		err := fmt.Errorf("session %s ran in a server's process: serve it without --engine", ss.rec.ID)
		ss.mu.Unlock()
		return openError{err}
	}
	ss.opening = make(chan struct{})
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		close(ss.opening)
		ss.opening = nil
		ss.mu.Unlock()
	}()
	if err := s.reserve(); err != nil {
		return err
	}
	defer s.release()
	if err := s.openInto(ctx, ss); err != nil {
		return err
	}
	s.saveRecord(ss.rec)
	return nil
}

// openInto opens ss's conversation through the Opener.
func (s *Server) openInto(ctx context.Context, ss *session) error {
	ss.mu.Lock()
	rec := ss.rec
	ss.mu.Unlock()
	// The conversation lives as long as the server, not the request.
	octx := context.WithoutCancel(ctx)
	opened, err := s.cfg.Open(octx, OpenRequest{WorkDir: rec.Cwd, Agent: rec.AgentRequested, Model: rec.Model, Mode: rec.Mode,
		Resume: rec.ID, Ask: ss.ask, Questions: approval.UserInputFunc(ss.askQuestions), Observer: ss})
	if err != nil {
		return openError{err}
	}
	conv := opened.Conv
	sess := conv.Session()
	ss.mu.Lock()
	ss.conv = conv
	ss.rec.ID = conv.ID()
	if ss.rec.Created.IsZero() {
		ss.rec.Created = sessionCreated(sess)
	}
	ss.rec.AgentFile = opened.AgentFile
	ss.rec.Agent = conv.AgentName()
	ss.info.Note = opened.Note
	if p := conv.Provider(); p != nil {
		ss.info.Provider, ss.info.Model = p.Name(), p.Model()
	}
	ss.mu.Unlock()
	tools := conv.Toolset().Names()
	if tools == nil {
		tools = []string{}
	}
	ev := sessionEvent{SessionEvent: streamjson.SessionEvent{Type: "session", SessionID: conv.ID(), StateDir: sess.Dir,
		Agent: conv.AgentName(), Tools: tools, Provider: ss.info.Provider, Model: ss.info.Model}, Cwd: rec.Cwd, Note: opened.Note}
	ss.log.add(ev)
	if rec.Mode == serverclient.ModePlan {
		conv.SetPlanMode(true)
	}
	conv.Start(s.ctx)
	return nil
}

// sessionEvent is the stream-json session event with the server's
// fields.
type sessionEvent struct {
	streamjson.SessionEvent
	Cwd  string `json:"cwd"`
	Note string `json:"note,omitempty"`
}

func sessionCreated(sess *savedsession.Session) time.Time {
	if m, err := savedsession.ReadMeta(sess.Dir); err == nil && !m.Created.IsZero() {
		return m.Created
	}
	return time.Now().UTC()
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	list := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	out := serverclient.SessionList{Sessions: make([]serverclient.Session, 0, len(list))}
	for _, ss := range list {
		out.Sessions = append(out.Sessions, ss.snapshot())
	}
	sortSessions(out.Sessions)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	if ss, ok := s.lookup(w, r); ok {
		writeJSON(w, http.StatusOK, ss.snapshot())
	}
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	if s.sessions[id] != ss {
		s.mu.Unlock()
		writeError(w, http.StatusGone, serverclient.CodeGone, fmt.Sprintf("session %s was deleted", id))
		return
	}
	delete(s.sessions, id)
	s.deleted[id] = true
	s.mu.Unlock()
	ss.mu.Lock()
	remote, running := ss.remote, ss.running
	ss.mu.Unlock()
	ss.close(closedDeleted, false)
	if remote != nil {
		// The session ends on the engine too (its running turn cancelled).
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := remote.End(ctx, running); err != nil {
			s.logger.Warn("server: the deleted session did not end on its engine", "session", id, "error", err)
		}
		cancel()
	}
	if err := s.reg.remove(id); err != nil {
		s.logger.Error("server: the session list was not saved", "error", err)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	var m serverclient.Message
	if !s.decode(w, r, &m) {
		return
	}
	if strings.TrimSpace(m.Text) == "" {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "text is required: the message may not be empty")
		return
	}
	content := []providers.ContentPart{providers.TextPart(m.Text)}
	for i, img := range m.Images {
		if !providers.IsImageType(img.MimeType) {
			writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest,
				fmt.Sprintf("images[%d].mime_type %q: use image/png, image/jpeg, image/gif or image/webp", i, img.MimeType))
			return
		}
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil || len(data) == 0 {
			writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("images[%d].data is not base64 image data", i))
			return
		}
		content = append(content, providers.ContentPart{Type: providers.PartImage, ImageURL: providers.DataURL(img.MimeType, data)})
	}
	if m.Steer && len(m.Images) > 0 {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "a steering message carries text only: send images as a message of their own")
		return
	}
	if s.shuttingDown(w) {
		return
	}
	if err := s.reopen(r.Context(), ss); err != nil {
		s.openError(w, err)
		return
	}
	status, seq, err := ss.send(m.Text, content, m.Steer)
	if errors.Is(err, errImages) {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("session %s: %v: send text only", r.PathValue("id"), err))
		return
	}
	if err != nil {
		writeError(w, http.StatusGone, serverclient.CodeGone, fmt.Sprintf("session %s is closed", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusAccepted, serverclient.MessageAccepted{Status: status, Seq: seq})
}

func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, ss.cancel())
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	ss.mu.Lock()
	conv, id, remote := ss.conv, ss.rec.ID, ss.remote
	ss.mu.Unlock()
	var msgs []providers.Message
	if remote != nil {
		var err error
		if msgs, err = ss.remoteHistory(r.Context()); err != nil {
			writeError(w, http.StatusBadGateway, serverclient.CodeEngine, oneLine(err.Error()))
			return
		}
	} else if conv != nil {
		msgs = conv.History()
	} else {
		root, err := savedsession.Root(nil)
		if err == nil {
			msgs, err = savedsession.LoadHistory(filepath.Join(root, id, savedsession.HistoryFile))
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			writeError(w, http.StatusInternalServerError, "internal", oneLine(err.Error()))
			return
		}
	}
	writeJSON(w, http.StatusOK, historyOf(msgs))
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	var a serverclient.ApprovalAnswer
	if !s.decode(w, r, &a) {
		return
	}
	var ans answer
	switch a.Decision {
	case serverclient.DecisionOnce:
		ans.approval = approval.Approve
	case serverclient.DecisionSession:
		ans.approval = approval.ApproveForSession
	case serverclient.DecisionReject:
		ans.approval, ans.feedback = approval.Reject, a.Feedback
	default:
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, fmt.Sprintf("invalid decision %q: use once, session or reject", a.Decision))
		return
	}
	if a.Feedback != "" && a.Decision != serverclient.DecisionReject {
		writeError(w, http.StatusBadRequest, serverclient.CodeBadRequest, "feedback goes with the decision reject only")
		return
	}
	id := r.PathValue("request_id")
	seq, err := ss.answer(id, kindApproval, ans, requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: kindApproval,
		Decision: a.Decision, Feedback: a.Feedback})
	s.answered(w, id, seq, err)
}

func (s *Server) answerQuestion(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.lookup(w, r)
	if !ok {
		return
	}
	var a serverclient.QuestionAnswer
	if !s.decode(w, r, &a) {
		return
	}
	ans := answer{questions: approval.Answers{Answers: a.Answers, Dismissed: a.Dismissed || len(a.Answers) == 0}}
	if ans.questions.Dismissed {
		ans.questions.Answers = nil
	}
	id := r.PathValue("request_id")
	seq, err := ss.answer(id, kindQuestion, ans, requestAnsweredEvent{Type: "request_answered", RequestID: id, Kind: kindQuestion,
		Answers: ans.questions.Answers, Dismissed: ans.questions.Dismissed})
	s.answered(w, id, seq, err)
}

func (s *Server) answered(w http.ResponseWriter, id string, seq int64, err error) {
	switch {
	case errors.Is(err, errAnswered):
		writeError(w, http.StatusConflict, serverclient.CodeConflict, fmt.Sprintf("request %s was answered already", id))
	case errors.Is(err, errEngine):
		writeError(w, http.StatusBadGateway, serverclient.CodeEngine, fmt.Sprintf("request %s: %v", id, err))
	case err != nil:
		writeError(w, http.StatusNotFound, serverclient.CodeNotFound, fmt.Sprintf("no request %q is waiting for an answer in this session", id))
	default:
		writeJSON(w, http.StatusOK, serverclient.Answered{RequestID: id, Seq: seq})
	}
}

// parseAfter reads where a client's event stream resumes: Last-Event-ID
// (a reconnecting EventSource), else ?after=SEQ, else 0.
func parseAfter(r *http.Request) (int64, error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid %s %q: give a sequence number (0 or more)", what, v)
	}
	return n, nil
}
