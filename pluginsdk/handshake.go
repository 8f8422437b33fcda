package pluginsdk

import plugin "github.com/hashicorp/go-plugin"

// ProtocolVersion is the wire protocol version this SDK speaks
// (protobuf package kosong.plugin.v1).
const ProtocolVersion = 1

// SDKVersion is reported by Describe.
const SDKVersion = "0.1.0"

// PluginName is the name under which a binary's tools are dispensed.
const PluginName = "tools"

// TLSFDEnv names the environment variable that tells a plugin which inherited
// file descriptor carries its one-time TLS material (see TLSBundle).
const TLSFDEnv = "KOSONG_PLUGIN_TLS_FD"

// Handshake is shared by kosong-host and every plugin binary. The cookie only
// stops a user from running a plugin by hand; it is not a security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "KOSONG_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7c1e0f0a-kosong-host-tool-plugin",
}
