package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Server is what a plugin binary serves, in plain Go values; pluginsdk
// implements it. Plugin adapts it to the gRPC Plugin service.
type Server interface {
	// Describe lists the binary's tools.
	Describe(ctx context.Context) (Description, error)
	// Load constructs the tools. dial connects to the host's capability
	// server (call it at most once, and only when the request offers
	// capabilities a tool needs); the server owns the returned client and
	// closes it when a later Load replaces it.
	Load(ctx context.Context, req LoadRequest, dial DialHost) ([]ToolLoad, error)
	// Call runs one tool call; ctx ends when the host cancels the call.
	Call(ctx context.Context, req CallRequest) (Result, error)
}

// Unloader is a Server that serves several loads in one process
// (Description.SharedLoads): Unload drops one load's tools and closes its
// connection to the host's capability server.
type Unloader interface {
	Unload(ctx context.Context, loadID string) error
}

// DialHostFailed begins the error of a Load whose plugin could not reach
// the host's capability server.
const DialHostFailed = "dial host capability server"

// DialHost connects to the host's capability server named in a Load request.
type DialHost func() (*HostClient, error)

// Plugin is the go-plugin plugin type of the wire contract. On the plugin
// side it serves Server; on the host side it dispenses a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is served on the plugin side; nil on the host side.
	Impl Server
	// Logger logs the calls that overran the cancel grace period; nil logs
	// nothing.
	Logger hclog.Logger
	// Overrun runs when a tool keeps running past the cancel grace period
	// (CancelGraceEnv, DefaultCancelGrace) after its call ended; a plugin
	// process exits. Nil only logs, which suits in-process harnesses.
	Overrun func()
}

// GRPCServer registers the Plugin service.
func (p *Plugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		// A Plugin without a server only negotiates (a test plugin does).
		pluginv1.RegisterPluginServer(s, pluginv1.UnimplementedPluginServer{})
		return nil
	}
	logger := p.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	overrun := p.Overrun
	if overrun == nil {
		overrun = func() {}
	}
	pluginv1.RegisterPluginServer(s, newGRPCServer(p.Impl, broker, logger, cancelGrace(), overrun))
	return nil
}

// GRPCClient returns a *Client whose capability server is served on the
// broker, with the message limits of every other connection (go-plugin's
// options alone leave gRPC's 4 MB default); ctx is go-plugin's, which ends
// when the plugin process exits.
func (p *Plugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	serve := func(h HostServer) (uint32, func()) {
		id := broker.NextId()
		var (
			mu      sync.Mutex
			server  *grpc.Server
			stopped bool
		)
		go broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(append(opts, ServerOptions()...)...)
			RegisterHost(s, h)
			mu.Lock()
			server = s
			if stopped {
				// Stopped before it served: Serve returns at once.
				s.Stop()
			}
			mu.Unlock()
			return s
		})
		// go-plugin serves a brokered server until the broker ends: a
		// load of a shared process that goes away stops its own.
		return id, func() {
			mu.Lock()
			defer mu.Unlock()
			stopped = true
			if server != nil {
				server.Stop()
			}
		}
	}
	return newClient(conn, serve, ctx.Done()), nil
}

func newGRPCServer(impl Server, broker *plugin.GRPCBroker, logger hclog.Logger, grace time.Duration, overrun func()) *grpcServer {
	return &grpcServer{impl: impl, broker: broker, logger: logger, grace: grace, overrun: overrun,
		workers: callWorkers{ch: make(chan func())}}
}

// grpcServer adapts a Server to the gRPC Plugin service.
type grpcServer struct {
	pluginv1.UnimplementedPluginServer
	impl    Server
	broker  *plugin.GRPCBroker
	logger  hclog.Logger
	grace   time.Duration
	overrun func()
	workers callWorkers
}

func (s *grpcServer) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	d, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return toProtoDescription(d), nil
}

func (s *grpcServer) Load(ctx context.Context, req *pluginv1.LoadRequest) (*pluginv1.LoadResponse, error) {
	id := req.GetCapabilityBrokerId()
	return s.load(ctx, req, func() (*grpc.ClientConn, error) {
		if s.broker == nil {
			return nil, errors.New("no broker")
		}
		return s.broker.DialWithOptions(id, DialOptions()...)
	})
}

// load constructs the plugin's tools; dial reaches the host's capability
// server, however the connection to the host carries it.
func (s *grpcServer) load(ctx context.Context, req *pluginv1.LoadRequest, dial func() (*grpc.ClientConn, error)) (*pluginv1.LoadResponse, error) {
	loads, err := s.impl.Load(ctx, fromProtoLoadRequest(req), func() (*HostClient, error) {
		conn, err := dial()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", DialHostFailed, err)
		}
		return NewHostClient(conn), nil
	})
	if err != nil {
		return nil, err
	}
	return toProtoLoadResponse(loads), nil
}

// Unload drops one load of a Server that serves several
// (Unloader); Unimplemented for any other.
func (s *grpcServer) Unload(ctx context.Context, req *pluginv1.UnloadRequest) (*pluginv1.UnloadResponse, error) {
	u, ok := s.impl.(Unloader)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this plugin serves one load per process")
	}
	if err := u.Unload(ctx, req.GetLoadId()); err != nil {
		return nil, err
	}
	return &pluginv1.UnloadResponse{}, nil
}

func (s *grpcServer) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	stop := watchdog(ctx, s.grace, func() { s.overran(req) })
	defer stop()
	return s.run(ctx, req)
}

// overran logs a call that outlived the grace period after its context
// ended and runs Overrun.
func (s *grpcServer) overran(req *pluginv1.CallRequest) {
	s.logger.Error("tool did not return after its call was cancelled; exiting so the host restarts the plugin",
		"tool", req.GetToolName(), "id", req.GetToolCallId(), "grace", s.grace)
	s.overrun()
}

// run runs one call, of the unary Call or of the Calls stream; the caller
// watches it.
func (s *grpcServer) run(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	r, err := s.impl.Call(ctx, fromProtoCallRequest(req))
	if err != nil {
		return nil, err
	}
	return toProtoResult(r), nil
}
