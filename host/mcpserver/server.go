// Package mcpserver serves an agent's toolset (plugin and MCP tools alike)
// as an MCP server, over stdio or streamable HTTP, with the official go-sdk.
//
// Tools keep the names, descriptions and parameter schemas they have in the
// toolset; the toolset validates the arguments and runs the call as the
// agent loop would. Results become MCP content; failures and rejections are
// isError results. Approvals the tools ask for are asked of the MCP client
// through elicitation when it supports it (see Approvals).
//
// The server speaks the MCP protocol versions up to 2025-11-25: elicitation
// during a tools/call is a plain server-to-client request there, while
// 2026-07-28 would require multi round-trip results (a tool would have to be
// re-run from the start after each answer). Newer clients negotiate down.
package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Options describe the server.
type Options struct {
	// Name and Version are the server's implementation info.
	Name    string
	Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	Logger       hclog.Logger
	// SessionTimeout closes an HTTP session that had no request for that
	// long (0: DefaultSessionTimeout; negative: never).
	SessionTimeout time.Duration
	// MaxSessions bounds the open HTTP sessions (0: DefaultMaxSessions): a
	// new one closes the least recently used idle session, or is refused
	// with 503 when every session has a request in flight.
	MaxSessions int
}

// Server serves a toolset over MCP.
type Server struct {
	ts        *toolset.Toolset
	approvals *Approvals
	mcp       *mcp.Server
	logger    hclog.Logger
	opts      Options
	seq       atomic.Int64
	served    map[string]string // name -> description and schema; sync's own
}

// legacyVersions are the protocol versions served: those before 2026-07-28.
func legacyVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

// New returns a server of the toolset's tools. approvals must be the
// Decider the toolset's tools were loaded with (nil: every approval is
// rejected by the tools themselves).
func New(ts *toolset.Toolset, approvals *Approvals, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Name == "" {
		opts.Name = "kosong-host"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{ts: ts, approvals: approvals, logger: opts.Logger, opts: opts}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Instructions:              opts.Instructions,
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		SupportedProtocolVersions: legacyVersions(),
	})
	ts.Watch(s.sync)
	return s
}

// sync serves the toolset's tools as they are now: tools that left it are
// removed, new or replaced ones added (the go-sdk then tells clients that
// their list changed). The toolset calls it, one change at a time.
func (s *Server) sync() {
	served := make(map[string]string, len(s.served))
	for _, name := range s.ts.Names() {
		t, ok := s.ts.Find(name)
		if !ok {
			continue
		}
		spec := t.Spec()
		ann := toolset.AnnotationsOf(t)
		shown := spec.Description + "\x00" + string(spec.Parameters) + "\x00" + annotationsKey(ann)
		if old, ok := s.served[name]; ok && old == shown {
			served[name] = shown
			continue
		}
		schema, err := objectSchema(spec.Parameters)
		if err != nil {
			s.logger.Warn("not served over MCP", "tool", name, "error", err)
			continue
		}
		s.mcp.AddTool(&mcp.Tool{Name: name, Description: spec.Description, InputSchema: schema,
			Annotations: toolAnnotations(ann)}, s.handler(name))
		served[name] = shown
	}
	var gone []string
	for name := range s.served {
		if _, ok := served[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	s.served = served
}

// objectSchema returns the tool's parameters schema as MCP wants it: a JSON
// object of type "object" (a schema without a type gets it).
func objectSchema(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("the parameters schema is not a JSON object")
	}
	switch m["type"] {
	case "object":
		return raw, nil
	case nil:
		m["type"] = "object"
		return json.Marshal(m)
	}
	return nil, fmt.Errorf("the parameters schema is of type %v, not object", m["type"])
}

// MCP is the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client over the transport until it disconnects or ctx is
// done (mcp.StdioTransport for stdio).
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Handler serves streamable HTTP (any number of clients) to clients that
// send "Authorization: Bearer TOKEN", with the go-sdk's DNS rebinding
// protection and cross-origin protection. A request without the token, or
// with another, gets 401 Unauthorized; an empty token lets no request in.
func (s *Server) Handler(token string) http.Handler {
	timeout := s.opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0 // the go-sdk's "never"
	}
	maxSessions := s.opts.MaxSessions
	if maxSessions <= 0 {
		maxSessions = DefaultMaxSessions
	}
	h := newSessionLimit(s.mcp, maxSessions, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{SessionTimeout: timeout}))
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "bearer"}, nil
	}
	authed := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	challenge := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kosong-host"`)
		authed.ServeHTTP(w, r)
	})
	return http.NewCrossOriginProtection().Handler(challenge)
}

// NewToken returns a random bearer token (256 bits, base64url).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a bearer token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// MinTokenLength is the length a chosen bearer token must have at least.
const MinTokenLength = 16

// CheckToken refuses a bearer token too short to guess-proof the server.
func CheckToken(token string) error {
	if len(token) < MinTokenLength {
		return fmt.Errorf("the bearer token is %d characters long, shorter than %d", len(token), MinTokenLength)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return errors.New("the bearer token contains white space")
	}
	return nil
}

// Path is where ServeHTTP serves the MCP endpoint.
const Path = "/mcp"

// ServeHTTP serves streamable HTTP at Path on ln, to clients that send the
// bearer token, until ctx is done.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	if err := CheckToken(token); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s.Handler(token))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}

// CheckAddr refuses an HTTP listen address that is not loopback (an empty
// host listens on every interface) unless allowRemote.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid --http address %q: %v", addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s is not a loopback address: serving the agent's tools to other machines needs --allow-remote", addr)
}

func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := "mcp-" + strconv.FormatInt(s.seq.Add(1), 10)
		if s.approvals != nil {
			s.approvals.begin(ctx, id, req.Session)
		}
		if token := req.Params.GetProgressToken(); token != nil {
			// Progress of an MCP tool goes on to our client.
			ctx = toolset.WithProgress(ctx, func(p toolset.Progress) {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
			})
		}
		args := string(req.Params.Arguments)
		start := time.Now()
		r := s.ts.Call(ctx, providers.ToolCall{ID: id, Name: name, Arguments: args})
		if s.approvals != nil && s.approvals.end(id) && r.Kind == toolset.Rejected {
			// Not the user's answer: nobody could be asked.
			r.Message, r.Brief = NoElicitationMessage, "Approval unavailable"
		}
		if s.logger.IsDebug() {
			s.logger.Debug("MCP tool call", "tool", name, "id", id, "duration", time.Since(start), "error", r.IsError())
		}
		return Result(r), nil
	}
}

// Result maps a toolset result to an MCP result: the message (if any) as
// the first text, then the output; failures and rejections are isError.
func Result(r toolset.Result) *mcp.CallToolResult {
	content := []mcp.Content{}
	if r.Message != "" {
		msg := r.Message
		if r.Runtime {
			msg += " This is an unexpected error and the tool is probably not working."
		}
		content = append(content, &mcp.TextContent{Text: msg})
	}
	for _, p := range r.Output {
		switch {
		case p.Type == providers.PartImage:
			content = append(content, imageContent(p.ImageURL))
		case p.Text != "":
			content = append(content, &mcp.TextContent{Text: p.Text})
		}
	}
	return &mcp.CallToolResult{Content: content, IsError: r.IsError()}
}

// imageContent is an image part: a data: URL as image data, another URL as
// a resource link.
func imageContent(url string) mcp.Content {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil {
				return &mcp.ImageContent{MIMEType: strings.TrimSuffix(meta, ";base64"), Data: b}
			}
		}
	}
	return &mcp.ResourceLink{URI: url, Name: "image"}
}
