package pluginrpc

import (
	plugin "github.com/hashicorp/go-plugin"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
)

// ProtocolVersion is the wire protocol version this package speaks
// (protobuf package kosong.plugin.v1).
const ProtocolVersion = 1

// PluginName is the name under which a binary's tools are dispensed.
const PluginName = "tools"

// Handshake is shared by kosong-host and every plugin binary. The cookie only
// stops a user from running a plugin by hand; it is not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "KOSONG_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7c1e0f0a-kosong-host-tool-plugin",
}

// MaxMessageBytes caps every gRPC message between host and plugin, both
// ways, on every connection (limits.MessageBytes): ServerOptions and
// DialOptions carry it, for a launched plugin's Plugin service, the host's
// capability server on go-plugin's broker and the plugin's connection to it,
// and a remote tool server's connection.
const MaxMessageBytes = limits.MessageBytes

// The environment variables the host sets for a plugin.
const (
	// TLSFDEnv names the inherited file descriptor that carries the plugin's
	// one-time TLS material (see TLSBundle).
	TLSFDEnv = "KOSONG_PLUGIN_TLS_FD"
	// CancelGraceEnv overrides DefaultCancelGrace (a Go duration).
	CancelGraceEnv = "KOSONG_PLUGIN_CANCEL_GRACE"
	// InitGCEnv is set, to a GOGC value, when the host started the plugin
	// with GOGC=off so that the binary's package initialisation runs without
	// garbage collection: Serve restores the collector to that value.
	InitGCEnv = "KOSONG_PLUGIN_GOGC"
	// LogLevelEnv is the hclog level the plugin logs at (e.g. "debug").
	LogLevelEnv = "KOSONG_PLUGIN_LOG_LEVEL"
)

// The capability names on the wire. A tool asks for a capability by taking
// its interface as a constructor parameter; the host offers them by name.
const (
	CapApproval    = "Approval"
	CapEnvironment = "Environment"
	CapSession     = "Session"
	CapConfig      = "Config"
	CapProgress    = "Progress"
	CapUserInput   = "UserInput"
	CapModel       = "Model"
	CapEditor      = "Editor"
	CapTerminal    = "Terminal"
)
