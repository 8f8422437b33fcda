package serverclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Client calls a server's API. Its methods are safe for concurrent use.
type Client struct {
	base  string // scheme://host, no trailing slash
	token string
	http  *http.Client
}

// New returns a client of the server at addr: an http(s) URL
// (http://127.0.0.1:7433), or unix:///path/to.sock for a unix socket.
// hc may be nil (a client of its own, no overall timeout: event streams
// last).
func New(addr, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("invalid server URL %q: give http://HOST:PORT, https://HOST:PORT or unix:///PATH", addr)
	}
	c := &Client{token: token, http: hc}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("invalid server URL %q: no host", addr)
		}
		c.base = u.Scheme + "://" + u.Host
		if c.http == nil {
			c.http = &http.Client{}
		}
	case "unix":
		path := u.Path
		if path == "" {
			return nil, fmt.Errorf("invalid server URL %q: no socket path", addr)
		}
		c.base = "http://localhost"
		if c.http == nil {
			tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", path)
			}}
			c.http = &http.Client{Transport: tr}
		}
	default:
		return nil, fmt.Errorf("invalid server URL %q: the scheme must be http, https or unix", addr)
	}
	return c, nil
}

// BaseURL is the URL requests go to (http://localhost for a socket).
func (c *Client) BaseURL() string { return c.base }

// do sends a request with body in (nil: none) as JSON and decodes the
// answer into out (nil: ignored); an error answer is an *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("server: invalid answer to %s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) authorize(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// readError turns an error answer into an *Error.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Code != "" {
		return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &Error{Status: resp.StatusCode, Code: "http", Message: msg}
}

func sessionPath(id string, rest ...string) string {
	p := APIVersion + "/sessions/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + url.PathEscape(r)
	}
	return p
}

// Health calls GET /healthz (no token needed).
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.do(ctx, http.MethodGet, "/healthz", nil, &h)
}

// CreateSession opens a session (POST /v1/sessions).
func (c *Client) CreateSession(ctx context.Context, req CreateSession) (Session, error) {
	var s Session
	return s, c.do(ctx, http.MethodPost, APIVersion+"/sessions", req, &s)
}

// Sessions lists the sessions (GET /v1/sessions).
func (c *Client) Sessions(ctx context.Context) ([]Session, error) {
	var l SessionList
	return l.Sessions, c.do(ctx, http.MethodGet, APIVersion+"/sessions", nil, &l)
}

// Session gets one session (GET /v1/sessions/{id}).
func (c *Client) Session(ctx context.Context, id string) (Session, error) {
	var s Session
	return s, c.do(ctx, http.MethodGet, sessionPath(id), nil, &s)
}

// DeleteSession closes a session and forgets it (DELETE /v1/sessions/{id}).
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, sessionPath(id), nil, nil)
}

// Send sends a message (POST /v1/sessions/{id}/messages).
func (c *Client) Send(ctx context.Context, id string, m Message) (MessageAccepted, error) {
	var a MessageAccepted
	return a, c.do(ctx, http.MethodPost, sessionPath(id, "messages"), m, &a)
}

// Cancel cancels the running turn and drops the queued messages.
func (c *Client) Cancel(ctx context.Context, id string) (Cancelled, error) {
	var a Cancelled
	return a, c.do(ctx, http.MethodPost, sessionPath(id, "cancel"), struct{}{}, &a)
}

// AnswerApproval answers an approval request.
func (c *Client) AnswerApproval(ctx context.Context, id, requestID string, a ApprovalAnswer) (Answered, error) {
	var r Answered
	return r, c.do(ctx, http.MethodPost, sessionPath(id, "approvals", requestID), a, &r)
}

// AnswerQuestion answers a question request.
func (c *Client) AnswerQuestion(ctx context.Context, id, requestID string, a QuestionAnswer) (Answered, error) {
	var r Answered
	return r, c.do(ctx, http.MethodPost, sessionPath(id, "questions", requestID), a, &r)
}

// History gets the saved conversation of a session.
func (c *Client) History(ctx context.Context, id string) (History, error) {
	var h History
	return h, c.do(ctx, http.MethodGet, sessionPath(id, "history"), nil, &h)
}
