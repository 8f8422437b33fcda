// Package pluginrpc is the wire glue between kosong-host and its tool
// plugins: the go-plugin plugin type on both sides, the handshake, the
// one-time TLS material, the environment variables the host sets for a
// plugin, and the converters between the generated protobuf types
// (package pluginv1) and plain Go values.
//
// Tool authors never import it: pluginsdk implements Server and serves it
// with Serve; the host's plugin client dispenses a *Remote; plugintest uses
// both ends in one process. pluginrpc does not import pluginsdk: its types
// are plain structs that pluginsdk maps its author-facing types to.
package pluginrpc
