// Command unaryonly is a test plugin as built before the Calls stream
// existed: its Plugin service answers Describe, Load and the unary Call,
// and Calls with Unimplemented. It serves Echo (the text back) and Wait
// (until its call is cancelled). Run with the argument slow-describe, it
// completes the handshake and never answers Describe.
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

type server struct {
	pluginv1.UnimplementedPluginServer
}

const schema = `{"type":"object","properties":{"text":{"type":"string"}}}`

func (server) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	if len(os.Args) > 1 && os.Args[1] == "slow-describe" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &pluginv1.DescribeResponse{Tools: []*pluginv1.ToolSpec{
		{Name: "Echo", Description: "Echo the arguments.", ParametersSchema: schema},
		{Name: "Wait", Description: "Wait until cancelled.", ParametersSchema: schema},
	}}, nil
}

func (server) Load(_ context.Context, req *pluginv1.LoadRequest) (*pluginv1.LoadResponse, error) {
	resp := &pluginv1.LoadResponse{}
	for _, name := range req.GetTools() {
		resp.Tools = append(resp.Tools, &pluginv1.ToolLoad{Name: name, Status: pluginv1.ToolLoad_STATUS_LOADED})
	}
	return resp, nil
}

func (server) Call(ctx context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	if req.GetToolName() == "Wait" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: &pluginv1.ToolOk{
		Output: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: "unary " + req.GetArguments()}}}}}}, nil
}

type legacy struct{ plugin.NetRPCUnsupportedPlugin }

func (legacy) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServer(s, server{})
	return nil
}

func (legacy) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, fmt.Errorf("plugin side only")
}

func main() {
	tlsCfg, err := pluginrpc.TLSFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sc := &plugin.ServeConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{pluginrpc.ProtocolVersion: {pluginrpc.PluginName: legacy{}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	}
	if tlsCfg != nil {
		sc.TLSProvider = func() (*tls.Config, error) { return tlsCfg, nil }
	}
	plugin.Serve(sc)
}
