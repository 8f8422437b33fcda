// Package plugintest lets a tool author test tools in plain `go test`,
// through the real gRPC glue and go-plugin broker, with fake capabilities.
//
//	h := plugintest.New(t, plugintest.Options{WorkDir: t.TempDir()}, myTool)
//	res := h.Call(t, "MyTool", `{"x": 1}`)
package plugintest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Approver answers approval requests; nil approves everything.
type Approver func(req ApprovalRequest) pluginsdk.Decision

// ApprovalRequest is what a tool asked for.
type ApprovalRequest struct {
	ToolCallID, ToolName, Action, Description string
}

// ApproveAll approves every request.
func ApproveAll(ApprovalRequest) pluginsdk.Decision { return pluginsdk.Decision{Approved: true} }

// RejectAll rejects every request with the given feedback.
func RejectAll(feedback string) Approver {
	return func(ApprovalRequest) pluginsdk.Decision { return pluginsdk.Decision{Feedback: feedback} }
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
	// Capabilities offered; nil offers all four.
	Capabilities []string
	// Tools to load; nil loads all.
	Tools []string
}

// Harness is a plugin served in-process over a real gRPC connection.
type Harness struct {
	Remote *pluginsdk.Remote
	// Loads is the per-tool load outcome.
	Loads map[string]*pluginv1.ToolLoad

	mu        sync.Mutex
	approvals []ApprovalRequest
	nextID    atomic.Int64
}

// New serves defs in-process, loads them against fake capabilities and
// returns the harness. It fails the test if the glue itself fails.
func New(t testing.TB, opts Options, defs ...pluginsdk.Definition) *Harness {
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
		opts.Capabilities = []string{pluginsdk.CapApproval, pluginsdk.CapEnvironment, pluginsdk.CapSession, pluginsdk.CapConfig}
	}
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{
		pluginsdk.PluginName: &pluginsdk.GRPCPlugin{Definitions: defs},
	})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(pluginsdk.PluginName)
	if err != nil {
		t.Fatalf("plugintest: dispense: %v", err)
	}
	h := &Harness{Remote: raw.(*pluginsdk.Remote), Loads: map[string]*pluginv1.ToolLoad{}}

	id := h.Remote.Broker.NextId()
	go h.Remote.Broker.AcceptAndServe(id, func(o []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(o...)
		pluginv1.RegisterApprovalServer(s, &fakeApproval{h: h, opts: opts})
		pluginv1.RegisterEnvironmentServer(s, &fakeEnvironment{opts: opts})
		pluginv1.RegisterSessionServer(s, &fakeSession{opts: opts})
		pluginv1.RegisterConfigServer(s, &fakeConfig{opts: opts})
		return s
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.Remote.Plugin.Load(ctx, &pluginv1.LoadRequest{
		CapabilityBrokerId: id,
		Capabilities:       opts.Capabilities,
		Session:            &pluginv1.SessionInfo{Id: opts.SessionID, WorkDir: opts.WorkDir, StateDir: opts.StateDir},
		Tools:              opts.Tools,
		ToolConfigs:        opts.Configs,
	})
	if err != nil {
		t.Fatalf("plugintest: load: %v", err)
	}
	for _, tl := range resp.GetTools() {
		h.Loads[tl.GetName()] = tl
	}
	return h
}

// Describe returns the plugin's tool specs.
func (h *Harness) Describe(t testing.TB) []*pluginv1.ToolSpec {
	t.Helper()
	resp, err := h.Remote.Plugin.Describe(context.Background(), &pluginv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("plugintest: describe: %v", err)
	}
	return resp.GetTools()
}

// Result is a call's outcome in plain form.
type Result struct {
	Kind     pluginsdk.ResultKind
	Output   string
	Message  string
	Brief    string
	Feedback string
	Runtime  bool
	Display  []*pluginv1.DisplayBlock
	Images   []*pluginv1.Image
}

// Call runs one tool call with a fresh call id and waits for its result.
func (h *Harness) Call(t testing.TB, tool, args string) Result {
	t.Helper()
	return h.CallContext(t, context.Background(), tool, args)
}

// CallContext is Call with a context, to test cancellation.
func (h *Harness) CallContext(t testing.TB, ctx context.Context, tool, args string) Result {
	t.Helper()
	id := fmt.Sprintf("call_%d", h.nextID.Add(1))
	resp, err := h.Remote.Plugin.Call(ctx, &pluginv1.CallRequest{ToolCallId: id, ToolName: tool, Arguments: args})
	if err != nil {
		t.Fatalf("plugintest: call %s: %v", tool, err)
	}
	return fromProto(resp)
}

func fromProto(resp *pluginv1.CallResponse) Result {
	var r Result
	collect := func(parts []*pluginv1.ContentPart) {
		for _, p := range parts {
			if img := p.GetImage(); img != nil {
				r.Images = append(r.Images, img)
				continue
			}
			r.Output += p.GetText()
		}
	}
	switch x := resp.GetResult().(type) {
	case *pluginv1.CallResponse_Ok:
		r.Kind, r.Message, r.Brief, r.Display = pluginsdk.KindOk, x.Ok.GetMessage(), x.Ok.GetBrief(), x.Ok.GetDisplay()
		collect(x.Ok.GetOutput())
	case *pluginv1.CallResponse_Error:
		r.Kind, r.Message, r.Brief, r.Display, r.Runtime = pluginsdk.KindError, x.Error.GetMessage(), x.Error.GetBrief(), x.Error.GetDisplay(), x.Error.GetRuntime()
		collect(x.Error.GetOutput())
	case *pluginv1.CallResponse_Rejected:
		r.Kind, r.Feedback = pluginsdk.KindRejected, x.Rejected.GetFeedback()
	}
	return r
}

// Approvals returns the approval requests the tools made so far.
func (h *Harness) Approvals() []ApprovalRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ApprovalRequest(nil), h.approvals...)
}

type fakeApproval struct {
	pluginv1.UnimplementedApprovalServer
	h    *Harness
	opts Options
}

func (f *fakeApproval) Request(_ context.Context, req *pluginv1.ApprovalRequest) (*pluginv1.ApprovalResponse, error) {
	ar := ApprovalRequest{ToolCallID: req.GetToolCallId(), ToolName: req.GetToolName(), Action: req.GetAction(), Description: req.GetDescription()}
	f.h.mu.Lock()
	f.h.approvals = append(f.h.approvals, ar)
	f.h.mu.Unlock()
	d := f.opts.Approver(ar)
	return &pluginv1.ApprovalResponse{Approved: d.Approved, Feedback: d.Feedback}, nil
}

type fakeEnvironment struct {
	pluginv1.UnimplementedEnvironmentServer
	opts Options
}

func (f *fakeEnvironment) Get(context.Context, *pluginv1.EnvironmentRequest) (*pluginv1.EnvironmentInfo, error) {
	return &pluginv1.EnvironmentInfo{Os: runtime.GOOS, ShellName: f.opts.Shell.Name, ShellPath: f.opts.Shell.Path,
		WorkDir: f.opts.WorkDir, NowUnixNano: time.Now().UnixNano()}, nil
}

type fakeSession struct {
	pluginv1.UnimplementedSessionServer
	opts Options
}

func (f *fakeSession) Get(context.Context, *pluginv1.SessionRequest) (*pluginv1.SessionInfo, error) {
	return &pluginv1.SessionInfo{Id: f.opts.SessionID, WorkDir: f.opts.WorkDir, StateDir: f.opts.StateDir}, nil
}

type fakeConfig struct {
	pluginv1.UnimplementedConfigServer
	opts Options
}

func (f *fakeConfig) Get(_ context.Context, req *pluginv1.ConfigRequest) (*pluginv1.ConfigResponse, error) {
	return &pluginv1.ConfigResponse{Json: f.opts.Configs[req.GetToolName()]}, nil
}
