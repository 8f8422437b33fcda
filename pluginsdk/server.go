package pluginsdk

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// GRPCPlugin is the go-plugin glue of the wire contract: the plugin side
// serves Definitions, the host side dispenses a *Remote. Tool authors never
// need it; hosts and test harnesses do.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Definitions []Definition
	Logger      hclog.Logger
	// Overrun runs when a tool keeps running past the cancel grace period
	// after its call ended; Serve exits the plugin. Nil only logs, which
	// suits in-process harnesses.
	Overrun func()
}

// Remote is the host's handle on a plugin: the Plugin client and the broker
// on which the host serves its capabilities.
type Remote struct {
	Plugin pluginv1.PluginClient
	Broker *plugin.GRPCBroker
}

// GRPCServer registers the Plugin service.
func (p *GRPCPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	srv := newServer(p.Definitions, broker, p.Logger)
	if p.Overrun != nil {
		srv.exit = p.Overrun
	}
	pluginv1.RegisterPluginServer(s, srv)
	return nil
}

// GRPCClient returns a *Remote.
func (p *GRPCPlugin) GRPCClient(_ context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Remote{Plugin: pluginv1.NewPluginClient(conn), Broker: broker}, nil
}

type server struct {
	pluginv1.UnimplementedPluginServer
	defs   map[string]*Definition
	order  []string
	broker *plugin.GRPCBroker
	logger hclog.Logger
	grace  time.Duration
	exit   func()

	mu      sync.RWMutex
	tools   map[string]callFunc
	conn    *grpc.ClientConn
	session *pluginv1.SessionInfo
}

func newServer(defs []Definition, broker *plugin.GRPCBroker, logger hclog.Logger) *server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &server{defs: map[string]*Definition{}, broker: broker, logger: logger, tools: map[string]callFunc{},
		grace: cancelGrace(), exit: func() {}}
	for i := range defs {
		d := &defs[i]
		s.defs[d.name] = d
		s.order = append(s.order, d.name)
	}
	return s
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return describe(s.order, s.defs), nil
}

func describe(order []string, defs map[string]*Definition) *pluginv1.DescribeResponse {
	resp := &pluginv1.DescribeResponse{SdkVersion: SDKVersion}
	for _, name := range order {
		d := defs[name]
		resp.Tools = append(resp.Tools, &pluginv1.ToolSpec{
			Name: d.name, Description: d.description, ParametersSchema: string(d.schema),
			Capabilities: d.Capabilities(), DefaultTimeoutMs: d.timeout.Milliseconds(),
		})
	}
	return resp
}

func (s *server) Load(ctx context.Context, req *pluginv1.LoadRequest) (*pluginv1.LoadResponse, error) {
	names := req.GetTools()
	if len(names) == 0 {
		names = s.order
	}
	needed := map[string]bool{}
	for _, name := range names {
		if d, ok := s.defs[name]; ok {
			for _, c := range d.Capabilities() {
				needed[c] = true
			}
		}
	}
	var conn *grpc.ClientConn
	if len(needed) > 0 && len(req.GetCapabilities()) > 0 {
		c, err := s.broker.Dial(req.GetCapabilityBrokerId())
		if err != nil {
			return nil, fmt.Errorf("dial host capability server: %w", err)
		}
		conn = c
	}
	caps, err := newCapabilities(ctx, conn, req.GetCapabilities(), needed)
	if err != nil {
		return nil, fmt.Errorf("fetch host capabilities: %w", err)
	}

	resp := &pluginv1.LoadResponse{}
	tools := map[string]callFunc{}
	for _, name := range names {
		tl := &pluginv1.ToolLoad{Name: name}
		resp.Tools = append(resp.Tools, tl)
		d, ok := s.defs[name]
		if !ok {
			tl.Status, tl.Reason = pluginv1.ToolLoad_STATUS_FAILED, fmt.Sprintf("the plugin has no tool %q", name)
			continue
		}
		fn, err := s.construct(ctx, d, caps)
		switch {
		case err == nil:
			tl.Status = pluginv1.ToolLoad_STATUS_LOADED
			tools[name] = fn
		case isSkip(err):
			tl.Status, tl.Reason = pluginv1.ToolLoad_STATUS_SKIPPED, skipReason(err)
		default:
			tl.Status, tl.Reason = pluginv1.ToolLoad_STATUS_FAILED, err.Error()
		}
	}

	s.mu.Lock()
	old := s.conn
	s.tools, s.conn, s.session = tools, conn, req.GetSession()
	s.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return resp, nil
}

func (s *server) construct(ctx context.Context, d *Definition, caps *capabilities) (callFunc, error) {
	if d.err != nil {
		return nil, d.err
	}
	values, err := caps.forTool(ctx, d.name, d.Capabilities())
	if err != nil {
		return nil, err
	}
	return d.construct(values)
}

func (s *server) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	s.mu.RLock()
	fn, ok := s.tools[req.GetToolName()]
	s.mu.RUnlock()
	if !ok {
		return toProtoResult(Result{Kind: KindError, Runtime: true,
			Message: fmt.Sprintf("tool %s is not loaded in this plugin", req.GetToolName())}), nil
	}
	ctx = withToolCall(ctx, req.GetToolCallId(), req.GetToolName())
	stop := watchdog(ctx, s.grace, func() {
		s.logger.Error("tool did not return after its call was cancelled; exiting so the host restarts the plugin",
			"tool", req.GetToolName(), "id", req.GetToolCallId(), "grace", s.grace)
		s.exit()
	})
	r := s.run(ctx, req, fn)
	stop()
	return toProtoResult(s.capResult(req.GetToolCallId(), r)), nil
}

func (s *server) run(ctx context.Context, req *pluginv1.CallRequest, fn callFunc) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("tool panicked", "tool", req.GetToolName(), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = Result{Kind: KindError, Runtime: true, Message: fmt.Sprintf("tool %s panicked: %v", req.GetToolName(), p)}
		}
	}()
	return fn(ctx, json.RawMessage(req.GetArguments()))
}
