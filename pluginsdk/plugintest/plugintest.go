// Package plugintest lets a tool author test tools in plain `go test`,
// through the real gRPC glue and go-plugin broker, with fake capabilities.
//
//	h := plugintest.New(t, plugintest.Options{WorkDir: t.TempDir()}, myTool)
//	res, err := h.Call(ctx, "MyTool", `{"x": 1}`)
//
// New fails the test when a tool does not load; Load returns each tool's
// load outcome, to test a skip or a constructor failure.
//
// The harness stands where kosong-host stands: it reads each tool's schema
// from the plugin's Describe, checks every call's arguments against it
// before the call reaches the plugin and fills in the schema's defaults
// (with pluginsdk/arguments, as the host does), and calls the tools over
// the Calls stream the host uses. Arguments the host would refuse (a
// missing required parameter, an unknown one, a wrong type, text that is
// not JSON) never reach the handler: Call returns the error result the
// model would get, with the host's text ("Error validating JSON
// arguments: missing parameter \"path\""), Brief "Invalid arguments".
package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/arguments"
	"github.com/kosong-host/kosong-host/pluginsdk/deadline"
	"github.com/kosong-host/kosong-host/pluginsdk/internal/bridge"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Approver answers approval requests; nil approves everything.
type Approver func(req ApprovalRequest) pluginsdk.Decision

// ApprovalRequest is what a tool asked for.
type ApprovalRequest struct {
	ToolCallID, ToolName, Action, Description string
	Display                                   []pluginsdk.DisplayBlock
}

// ApproveAll approves every request.
func ApproveAll(ApprovalRequest) pluginsdk.Decision { return pluginsdk.Decision{Approved: true} }

// RejectAll rejects every request with the given feedback.
func RejectAll(feedback string) Approver {
	return func(ApprovalRequest) pluginsdk.Decision { return pluginsdk.Decision{Feedback: feedback} }
}

// ProgressReport is a progress report a tool made.
type ProgressReport struct {
	ToolCallID, ToolName string
	Done, Total          float64
	Message              string
}

// The capability names a tool may ask for (its interface's name in
// pluginsdk), to restrict Options.Capabilities.
const (
	Approval    = "Approval"
	Environment = "Environment"
	Session     = "Session"
	Config      = "Config"
	Progress    = "Progress"
	UserInput   = "UserInput"
	Model       = "Model"
)

// Answerer answers a tool's questions (the UserInput capability).
type Answerer func(questions []pluginsdk.Question) pluginsdk.Answers

// ModelInfo are the model facts the Model capability reports.
type ModelInfo struct {
	Provider, Name, Alias string
	Capabilities          []string
	CapabilitiesKnown     bool
	MaxContextSize        int64
}

// Options configure the fake host.
type Options struct {
	// WorkDir defaults to t.TempDir().
	WorkDir string
	// StateDir defaults to t.TempDir().
	StateDir  string
	SessionID string
	// Shell defaults to bash at /bin/bash.
	Shell pluginsdk.Shell
	// Approver defaults to ApproveAll.
	Approver Approver
	// Configs holds each tool's config block as JSON.
	Configs map[string]string
	// Capabilities offered (Approval, Environment...); nil offers the first
	// five, UserInput when Answerer is set and Model when Model is.
	Capabilities []string
	// Answerer answers questions; nil offers no UserInput.
	Answerer Answerer
	// Model is what the Model capability reports; nil offers no Model.
	Model *ModelInfo
	// Tools to load; nil loads all.
	Tools []string
	// Logger receives the plugin's logs (pluginsdk.Logger); nil discards them.
	Logger hclog.Logger
	// OnProgress sees each progress report as it arrives; Harness.Progress
	// lists them all afterwards.
	OnProgress func(ProgressReport)
}

// Status is a tool's load outcome.
type Status int

// The load outcomes.
const (
	Loaded Status = iota + 1
	Skipped
	Failed
)

func (s Status) String() string {
	switch s {
	case Loaded:
		return "loaded"
	case Skipped:
		return "skipped"
	case Failed:
		return "failed"
	}
	return "unknown"
}

var fromRPCStatus = map[pluginrpc.LoadStatus]Status{
	pluginrpc.StatusLoaded: Loaded, pluginrpc.StatusSkipped: Skipped, pluginrpc.StatusFailed: Failed,
}

// ToolLoad is one tool's load outcome, with the reason of a skip or failure.
type ToolLoad struct {
	Name   string
	Status Status
	Reason string
}

// ToolSpec is a tool as the plugin describes it to the host.
type ToolSpec struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the parameters.
	Schema json.RawMessage
	// Capabilities the constructor asks for.
	Capabilities []string
	// Timeout is the tool's default call timeout; 0 means the host's.
	Timeout time.Duration
	// Annotations are what the tool declares it does, as the host reads
	// them.
	Annotations pluginsdk.Annotations
}

// Harness is a plugin served in-process over a real gRPC connection.
type Harness struct {
	client *pluginrpc.Client
	opts   Options
	// schemas are the described tools' parameters schemas, by tool name.
	schemas map[string]*arguments.Schema

	mu        sync.Mutex
	approvals []ApprovalRequest
	progress  []ProgressReport
	active    map[string]bool
	nextID    atomic.Int64
}

// New serves defs in-process and loads them against fake capabilities. It
// fails the test at once when a declaration is wrong (Definition.Err), when
// a tool does not load (a skip or a constructor error, with its reason) or
// when the glue itself fails. Use Load to test a skip or a failure.
func New(t testing.TB, opts Options, defs ...pluginsdk.Definition) *Harness {
	t.Helper()
	h, loads := Load(t, opts, defs...)
	var bad []string
	for _, l := range loads {
		if l.Status != Loaded {
			bad = append(bad, fmt.Sprintf("tool %s %s: %s", l.Name, l.Status, l.Reason))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("plugintest: %s (use plugintest.Load to test a tool that does not load)", strings.Join(bad, "; "))
	}
	return h
}

// Load is New without the check that every tool loaded: it returns each
// tool's load outcome in the order loaded. Calling a tool that did not load
// returns a runtime error result.
func Load(t testing.TB, opts Options, defs ...pluginsdk.Definition) (*Harness, []ToolLoad) {
	t.Helper()
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	if opts.SessionID == "" {
		opts.SessionID = "test-session"
	}
	if opts.Shell.Path == "" {
		opts.Shell = pluginsdk.Shell{Name: "bash", Path: "/bin/bash"}
	}
	if opts.Approver == nil {
		opts.Approver = ApproveAll
	}
	if opts.Capabilities == nil {
		opts.Capabilities = []string{Approval, Environment, Session, Config, Progress}
		if opts.Answerer != nil {
			opts.Capabilities = append(opts.Capabilities, UserInput)
		}
		if opts.Model != nil {
			opts.Capabilities = append(opts.Capabilities, Model)
		}
	}
	srv, err := bridge.NewServer(defs, opts.Logger)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	// Served and reached as kosong-host serves and reaches a plugin, with
	// the same message limits on every connection.
	client, stop, err := pluginrpc.InProcess(srv, opts.Logger)
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	t.Cleanup(stop)
	h := &Harness{client: client, opts: opts, active: map[string]bool{}, schemas: map[string]*arguments.Schema{}}
	t.Cleanup(h.client.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// As the host does: the described schemas check every call; a schema
	// the host cannot use keeps the tool out of its toolset.
	d, err := h.client.Describe(ctx)
	if err != nil {
		t.Fatalf("plugintest: describe: %v", err)
	}
	for _, spec := range d.Tools {
		schema, err := arguments.Compile(spec.Name, spec.ParametersSchema)
		if err != nil {
			t.Fatalf("plugintest: %v (kosong-host refuses the tool)", err)
		}
		h.schemas[spec.Name] = schema
	}
	id := h.client.ServeHost(fakeHost{h: h})
	rl, err := h.client.Load(ctx, pluginrpc.LoadRequest{
		CapabilityBrokerID: id,
		Capabilities:       opts.Capabilities,
		Session:            pluginrpc.Session{ID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: opts.StateDir},
		Tools:              opts.Tools,
		ToolConfigs:        opts.Configs,
	})
	if err != nil {
		t.Fatalf("plugintest: load: %v", err)
	}
	loads := make([]ToolLoad, 0, len(rl))
	for _, l := range rl {
		loads = append(loads, ToolLoad{Name: l.Name, Status: fromRPCStatus[l.Status], Reason: l.Reason})
	}
	return h, loads
}

// Describe returns the plugin's tool specs.
func (h *Harness) Describe(t testing.TB) []ToolSpec {
	t.Helper()
	d, err := h.client.Describe(context.Background())
	if err != nil {
		t.Fatalf("plugintest: describe: %v", err)
	}
	specs := make([]ToolSpec, 0, len(d.Tools))
	for _, s := range d.Tools {
		specs = append(specs, ToolSpec{Name: s.Name, Description: s.Description, Schema: s.ParametersSchema,
			Capabilities: s.Capabilities, Timeout: s.DefaultTimeout, Annotations: s.Annotations})
	}
	return specs
}

// Call runs one tool call with a fresh call id (call_1, call_2...) and
// returns its result. Arguments the host would refuse return the host's
// error result without reaching the tool; the tool gets the arguments
// with the schema's defaults filled in, as from the host. The error is a
// failure of the call itself, not of the tool: a call whose ctx ends first
// returns an error wrapping ctx's error (errors.Is(err,
// context.Canceled) or context.DeadlineExceeded).
func (h *Harness) Call(ctx context.Context, tool, args string) (pluginsdk.Result, error) {
	raw := json.RawMessage(args)
	if schema, ok := h.schemas[tool]; ok {
		checked, err := schema.Check(raw)
		if err != nil {
			return pluginsdk.Result{Kind: pluginsdk.KindError, Message: err.Error(), Brief: arguments.Brief}, nil
		}
		raw = checked
	}
	id := fmt.Sprintf("call_%d", h.nextID.Add(1))
	h.mu.Lock()
	h.active[id] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.active, id)
		h.mu.Unlock()
	}()
	r, err := h.client.Call(ctx, pluginrpc.CallRequest{ToolCallID: id, ToolName: tool, Arguments: raw})
	// The deadline travels with the call, so the tool sees it end a moment
	// before this side does: a call that ends that close to its deadline
	// ended by it.
	deadline.Await(ctx)
	if ctx.Err() != nil {
		return pluginsdk.Result{}, fmt.Errorf("plugintest: call %s: %w", tool, context.Cause(ctx))
	}
	if err != nil {
		return pluginsdk.Result{}, fmt.Errorf("plugintest: call %s: %s", tool, status.Convert(err).Message())
	}
	return fromRPCResult(r), nil
}

// MustCall is Call with a background context; it fails the test when the
// call itself fails.
func (h *Harness) MustCall(t testing.TB, tool, args string) pluginsdk.Result {
	t.Helper()
	r, err := h.Call(context.Background(), tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Approvals returns the approval requests the tools made so far.
func (h *Harness) Approvals() []ApprovalRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ApprovalRequest(nil), h.approvals...)
}

// Progress returns the progress reports the tools made so far.
func (h *Harness) Progress() []ProgressReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ProgressReport(nil), h.progress...)
}

var fromRPCKind = map[pluginrpc.ResultKind]pluginsdk.ResultKind{
	pluginrpc.ResultOk: pluginsdk.KindOk, pluginrpc.ResultError: pluginsdk.KindError, pluginrpc.ResultRejected: pluginsdk.KindRejected,
}

func fromRPCResult(r pluginrpc.Result) pluginsdk.Result {
	out := pluginsdk.Result{Kind: fromRPCKind[r.Kind], Message: r.Message, Brief: r.Brief, Feedback: r.Feedback,
		Runtime: r.Runtime, Display: fromRPCDisplay(r.Display)}
	for _, p := range r.Output {
		out.Output = append(out.Output, pluginsdk.Part{Text: p.Text, MimeType: p.MimeType, Data: p.Data, URL: p.URL})
	}
	return out
}

func fromRPCDisplay(blocks []pluginrpc.DisplayBlock) []pluginsdk.DisplayBlock {
	var out []pluginsdk.DisplayBlock
	for _, b := range blocks {
		out = append(out, pluginsdk.DisplayBlock{Kind: b.Kind, Data: b.Data})
	}
	return out
}

// fakeHost answers the plugin's capability requests from Options.
type fakeHost struct{ h *Harness }

var _ pluginrpc.HostServer = fakeHost{}

func (f fakeHost) checkActive(id, what string) error {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	if !f.h.active[id] {
		return fmt.Errorf("%s with no tool call in progress (tool call id %q)", what, id)
	}
	return nil
}

func (f fakeHost) RequestApproval(_ context.Context, req pluginrpc.ApprovalRequest) (pluginrpc.Decision, error) {
	if err := f.checkActive(req.ToolCallID, "approval requested"); err != nil {
		return pluginrpc.Decision{}, err
	}
	ar := ApprovalRequest{ToolCallID: req.ToolCallID, ToolName: req.ToolName, Action: req.Action,
		Description: req.Description, Display: fromRPCDisplay(req.Display)}
	f.h.mu.Lock()
	f.h.approvals = append(f.h.approvals, ar)
	f.h.mu.Unlock()
	d := f.h.opts.Approver(ar)
	return pluginrpc.Decision{Approved: d.Approved, Feedback: d.Feedback}, nil
}

func (f fakeHost) GetEnvironment(context.Context) (pluginrpc.Environment, error) {
	o := f.h.opts
	return pluginrpc.Environment{OS: runtime.GOOS, ShellName: o.Shell.Name, ShellPath: o.Shell.Path,
		WorkDir: o.WorkDir, Now: time.Now()}, nil
}

func (f fakeHost) GetSession(context.Context) (pluginrpc.Session, error) {
	o := f.h.opts
	return pluginrpc.Session{ID: o.SessionID, WorkDir: o.WorkDir, StateDir: o.StateDir}, nil
}

func (f fakeHost) GetConfig(_ context.Context, tool string) (json.RawMessage, error) {
	if c, ok := f.h.opts.Configs[tool]; ok && c != "" {
		return json.RawMessage(c), nil
	}
	return nil, nil
}

func (f fakeHost) ReportProgress(_ context.Context, p pluginrpc.ProgressReport) error {
	if err := f.checkActive(p.ToolCallID, "progress reported"); err != nil {
		return err
	}
	r := ProgressReport{ToolCallID: p.ToolCallID, ToolName: p.ToolName, Done: p.Progress, Total: p.Total, Message: p.Message}
	f.h.mu.Lock()
	f.h.progress = append(f.h.progress, r)
	f.h.mu.Unlock()
	if f.h.opts.OnProgress != nil {
		f.h.opts.OnProgress(r)
	}
	return nil
}

func (f fakeHost) AskUser(_ context.Context, req pluginrpc.QuestionRequest) (pluginrpc.Answers, error) {
	if err := f.checkActive(req.ToolCallID, "questions asked"); err != nil {
		return pluginrpc.Answers{}, err
	}
	if f.h.opts.Answerer == nil {
		return pluginrpc.Answers{}, fmt.Errorf("the harness offers no UserInput")
	}
	var qs []pluginsdk.Question
	for _, q := range req.Questions {
		pq := pluginsdk.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			pq.Options = append(pq.Options, pluginsdk.QuestionOption{Label: o.Label, Description: o.Description})
		}
		qs = append(qs, pq)
	}
	a := f.h.opts.Answerer(qs)
	return pluginrpc.Answers{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

func (f fakeHost) GetModel(context.Context) (pluginrpc.ModelInfo, error) {
	m := f.h.opts.Model
	if m == nil {
		return pluginrpc.ModelInfo{}, fmt.Errorf("the harness offers no Model")
	}
	return pluginrpc.ModelInfo{Provider: m.Provider, Name: m.Name, Alias: m.Alias, Capabilities: m.Capabilities,
		CapabilitiesKnown: m.CapabilitiesKnown, MaxContextSize: m.MaxContextSize}, nil
}

// NewServer returns the SDK's server of defs, as Serve serves it, for glue
// other than the harness's (a benchmark's bare gRPC server, say). It returns
// the declaration errors Serve would refuse defs with.
func NewServer(defs ...pluginsdk.Definition) (pluginrpc.Server, error) {
	return bridge.NewServer(defs, nil)
}
