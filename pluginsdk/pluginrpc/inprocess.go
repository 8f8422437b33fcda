package pluginrpc

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
)

// InProcess serves impl in this process, as Serve does in a plugin binary
// (in go-plugin's test mode, without TLS), and connects to it as the host
// connects to a launched plugin: the same gRPC options, so the same message
// limits, on both ends and on the capability server. stop ends both; call
// it once. plugintest runs its harness on it.
func InProcess(impl Server, logger hclog.Logger) (c *Client, stop func(), err error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {PluginName: &Plugin{Impl: impl, Logger: logger}}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, ServerOptions()...)...)
		},
		Logger: logger,
		Test:   &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed},
	})
	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		cancel()
		return nil, nil, errors.New("the in-process plugin server did not start")
	}
	rc.ReattachFunc = func() (runner.AttachedRunner, error) { return inProcessRunner{closed: closed}, nil }
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          plugin.PluginSet{PluginName: &Plugin{}},
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  DialOptions(),
		Logger:           logger,
	})
	// The client's Close asks the server to shut down, which ends Serve;
	// cancelling Serve's context meanwhile would stop the server twice at
	// once (a race in go-plugin), so that is only the fallback.
	stop = func() {
		defer cancel()
		if cp, err := client.Client(); err == nil && cp.Close() == nil {
			t := time.NewTimer(stopWait)
			defer t.Stop()
			select {
			case <-closed:
				return
			case <-t.C:
			}
		}
		cancel()
		<-closed
	}
	cp, err := client.Client()
	if err != nil {
		stop()
		return nil, nil, err
	}
	raw, err := cp.Dispense(PluginName)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return raw.(*Client), stop, nil
}

// stopWait bounds the wait for an in-process server to shut down when asked.
const stopWait = 10 * time.Second

// inProcessRunner is the go-plugin runner of a plugin served in this
// process: it "exits" when the server stops.
type inProcessRunner struct{ closed <-chan struct{} }

func (r inProcessRunner) Wait(ctx context.Context) error {
	select {
	case <-r.closed:
	case <-ctx.Done():
	}
	return nil
}

func (inProcessRunner) Kill(context.Context) error { return nil }
func (inProcessRunner) ID() string                 { return "in-process" }
func (inProcessRunner) PluginToHost(n, a string) (string, string, error) {
	return n, a, nil
}
func (inProcessRunner) HostToPlugin(n, a string) (string, string, error) {
	return n, a, nil
}
