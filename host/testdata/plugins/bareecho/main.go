// Command bareecho serves the Plugin service's Call as a bare gRPC echo on a
// unix socket, without go-plugin or TLS: the baseline of the round-trip
// benchmark. Usage: bareecho SOCKET. It prints "ready" once listening.
package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

type server struct {
	pluginv1.UnimplementedPluginServer
}

func (server) Call(_ context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: &pluginv1.ToolOk{
		Output: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: req.GetArguments()}}}}}}, nil
}

func main() {
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	pluginv1.RegisterPluginServer(s, server{})
	fmt.Println("ready")
	_ = s.Serve(l)
}
