package pluginrpc

import (
	"context"
	"errors"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Client is the host's side of one plugin, in Go values: it asks the
// plugin to Describe and Load its tools, runs calls on the plugin's Calls
// stream (or unary Calls, for a plugin built before the stream), checks
// that the plugin answers, and serves the host's capabilities where the
// plugin reaches them. kosong-host (host/plugin) and plugintest both use
// it; go-plugin dispenses one for a launched plugin (Plugin.GRPCClient),
// DialNetwork makes one for a remote tool server.
//
// Its errors are gRPC status errors, as the plugin's connection reports
// them: Unavailable once the connection is gone, ResourceExhausted for a
// message over MaxMessageBytes, and for a call whose ctx ends, ctx's
// status (Canceled, DeadlineExceeded) at once, while the plugin is told to
// cancel the call.
type Client struct {
	plugin pluginv1.PluginClient
	conn   *grpc.ClientConn
	calls  *callStream
	serve  func(HostServer) (uint32, func())
	done   <-chan struct{}
}

func newClient(conn *grpc.ClientConn, serve func(HostServer) (uint32, func()), done <-chan struct{}) *Client {
	pc := pluginv1.NewPluginClient(conn)
	return &Client{plugin: pc, conn: conn, calls: newCallStream(pc), serve: serve, done: done}
}

// ErrEmptyResult is the error of a call the plugin answered with no
// result at all.
var ErrEmptyResult = errors.New("the plugin returned an empty result")

// Describe asks the plugin for its tools.
func (c *Client) Describe(ctx context.Context) (Description, error) {
	resp, err := c.plugin.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return Description{}, err
	}
	return fromProtoDescription(resp), nil
}

// Load asks the plugin to construct its tools. Serve the capabilities
// first (ServeHost) when a tool needs some, and send the broker id.
func (c *Client) Load(ctx context.Context, req LoadRequest) ([]ToolLoad, error) {
	resp, err := c.plugin.Load(ctx, toProtoLoadRequest(req))
	if err != nil {
		return nil, err
	}
	return fromProtoLoadResponse(resp), nil
}

// Call runs one tool call, on the Calls stream (opened by the first call),
// or as a unary Call for a plugin without the stream. Calls may run in
// parallel. A plugin that answers with no result fails the call with
// ErrEmptyResult.
func (c *Client) Call(ctx context.Context, req CallRequest) (Result, error) {
	resp, err := c.calls.Call(ctx, toProtoCallRequest(req))
	if err != nil {
		return Result{}, err
	}
	r, ok := fromProtoResult(resp)
	if !ok {
		return Result{}, ErrEmptyResult
	}
	return r, nil
}

// Streaming reports whether calls go over the Calls stream: false before
// the first call and for a plugin without the stream.
func (c *Client) Streaming() bool { return c.calls.Streaming() }

// Ping asks the plugin's health service whether it serves: an answer
// within ctx says the process is alive and answering.
func (c *Client) Ping(ctx context.Context) error {
	_, err := grpc_health_v1.NewHealthClient(c.conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err
}

// ServeHost serves h as the plugin's capability server (RegisterHost) where
// the plugin reaches it: on go-plugin's broker for a launched plugin, on
// streams of the connection for a remote tool server. It returns the id to
// send as LoadRequest.CapabilityBrokerID (0 on a remote connection, where
// none is needed). Serve once per Load.
func (c *Client) ServeHost(h HostServer) uint32 {
	id, _ := c.serve(h)
	return id
}

// ServeHostStoppable is ServeHost for one load among several of a shared
// process: stop stops serving h (the load was unloaded), where the
// connection's own end would otherwise be the only end of it.
func (c *Client) ServeHostStoppable(h HostServer) (id uint32, stop func()) { return c.serve(h) }

// Unload asks a plugin that serves several loads (Description.SharedLoads)
// to drop the load loadID.
func (c *Client) Unload(ctx context.Context, loadID string) error {
	_, err := c.plugin.Unload(ctx, &pluginv1.UnloadRequest{LoadId: loadID})
	return err
}

// Done is closed once the plugin's connection has ended: a launched
// plugin's process has exited (and its output has been read), a remote
// connection is gone. It is nil, never closed, where nothing says so.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the Calls stream: calls still waiting fail with Canceled, and
// later calls fail at once. It leaves the connection to its owner.
func (c *Client) Close() { c.calls.Close() }
