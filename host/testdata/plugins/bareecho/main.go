// Command bareecho serves the Plugin service on a unix socket without
// go-plugin: the baselines of the round-trip benchmark. Usage: bareecho
// SOCKET [sdk]. By default Call is a bare echo of the arguments; with "sdk"
// the service is pluginsdk's own, serving an Echo tool like the echo
// plugin's (Load it first), so that only go-plugin differs from a plugin.
// With KOSONG_PLUGIN_TLS_FD set it reads a pluginrpc.TLSBundle from that
// descriptor and serves mutual TLS, as plugins do. It prints "ready" once
// listening.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

type server struct {
	pluginv1.UnimplementedPluginServer
}

func (server) Call(_ context.Context, req *pluginv1.CallRequest) (*pluginv1.CallResponse, error) {
	return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: &pluginv1.ToolOk{
		Output: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: req.GetArguments()}}}}}}, nil
}

type echoParams struct {
	Text string `json:"text" jsonschema:"The text to echo back."`
}

type echo struct{}

func (echo) Call(_ context.Context, p echoParams) pluginsdk.Result {
	return pluginsdk.Ok(p.Text).WithBrief("echoed")
}

func newEcho() (echo, error) { return echo{}, nil }

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	var opts []grpc.ServerOption
	if fdText := os.Getenv(pluginrpc.TLSFDEnv); fdText != "" {
		fd, err := strconv.Atoi(fdText)
		if err != nil {
			fail(err)
		}
		raw, err := io.ReadAll(os.NewFile(uintptr(fd), "tls"))
		if err != nil {
			fail(err)
		}
		var b pluginrpc.TLSBundle
		if err := json.Unmarshal(raw, &b); err != nil {
			fail(err)
		}
		cfg, err := b.Config()
		if err != nil {
			fail(err)
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fail(err)
	}
	s := grpc.NewServer(opts...)
	if len(os.Args) > 2 && os.Args[2] == "sdk" {
		srv, err := plugintest.NewServer(pluginsdk.NewTool[echoParams]("Echo", "Echo the given text back, unchanged.", newEcho))
		if err != nil {
			fail(err)
		}
		if err := (&pluginrpc.Plugin{Impl: srv}).GRPCServer(nil, s); err != nil {
			fail(err)
		}
	} else {
		pluginv1.RegisterPluginServer(s, server{})
	}
	fmt.Println("ready")
	_ = s.Serve(l)
}
