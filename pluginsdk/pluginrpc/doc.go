// Package pluginrpc is the wire glue between kosong-host and its tool
// plugins: the go-plugin plugin type on both sides, the handshake, the
// one-time TLS material, the environment variables the host sets for a
// plugin, and the converters between the generated protobuf types
// (package pluginv1) and plain Go values.
//
// It is the only package that touches the generated types: every other
// package, on either side, speaks the plain Go values of this one.
//
// Tool authors never import it: pluginsdk implements Server and serves it
// with Serve. The host's plugin package dispenses a *Client per plugin and
// serves its capabilities (host/capability implements HostServer) with
// Client.ServeHost, which registers them with RegisterHost whichever way
// the plugin is reached; plugintest uses both ends in one process, the same
// way. pluginrpc does not import pluginsdk: its types are plain structs that
// pluginsdk maps its author-facing types to.
package pluginrpc
