// Command badproto is a test plugin speaking protocol version 2 only.
package main

import (
	plugin "github.com/hashicorp/go-plugin"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

func main() {
	hs := pluginrpc.Handshake
	hs.ProtocolVersion = 2
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  hs,
		VersionedPlugins: map[int]plugin.PluginSet{2: {pluginrpc.PluginName: &pluginrpc.Plugin{}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
