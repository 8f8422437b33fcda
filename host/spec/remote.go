package spec

import (
	"net"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// RemoteRef names a remote tool server: a plugin served over TCP with mutual
// TLS (`kosong-host plugins serve`, or a plugin binary given --listen).
//
//	tools:
//	  - remote: tools.example.com:7443   # HOST:PORT, instead of plugin
//	    name: sql                         # optional; default the host ("tools.example.com")
//	    tls:                              # required; paths relative to this file
//	      ca: certs/ca.pem                # the team CA that signed the server's certificate
//	      cert: certs/client.pem          # this host's client certificate
//	      key: certs/client-key.pem
//	      server_name: tools.internal     # optional; default the host of remote
//	    tools: [RunQuery]                 # optional, as for a plugin; config and timeout too
type RemoteRef struct {
	// Addr is HOST:PORT as written.
	Addr string
	// Name is the plugin's display name.
	Name string
	// CA, Cert and Key are absolute paths of PEM files.
	CA, Cert, Key string
	// ServerName is checked against the server's certificate ("" = the host of Addr).
	ServerName string

	tlsNode *yaml.Node // while parsing
}

var tlsKeys = []string{"ca", "cert", "key", "server_name"}

// remoteKey parses a key of a tool reference that only a remote reference has.
func (p *parser) remoteKey(r *ToolRef, k, v *yaml.Node, where string) error {
	if r.Remote == nil {
		r.Remote = &RemoteRef{}
	}
	rr := r.Remote
	switch k.Value {
	case "remote":
		s, err := p.str(v, where+": remote")
		if err != nil {
			return err
		}
		host, port, perr := net.SplitHostPort(s)
		if n, nerr := strconv.Atoi(port); perr != nil || host == "" || nerr != nil || n <= 0 || n > 65535 {
			return p.errf(v, "%s: invalid remote %q (want HOST:PORT, e.g. tools.example.com:7443)", where, s)
		}
		rr.Addr = s
		if rr.Name == "" {
			rr.Name = host
		}
	case "name":
		s, err := p.str(v, where+": name")
		if err != nil {
			return err
		}
		if !pluginNameRE.MatchString(s) {
			return p.errf(v, "%s: invalid name %q (want letters, digits, '.', '_', '-')", where, s)
		}
		rr.Name = s
	case "tls":
		rr.tlsNode = v
		return p.mapping(v, where+": tls", func(k, v *yaml.Node) error {
			s, err := p.str(v, where+": tls: "+k.Value)
			if err != nil {
				return err
			}
			if s == "" {
				return p.errf(v, "%s: tls: %s must not be empty", where, k.Value)
			}
			switch k.Value {
			case "ca":
				rr.CA = p.f.abs(s)
			case "cert":
				rr.Cert = p.f.abs(s)
			case "key":
				rr.Key = p.f.abs(s)
			case "server_name":
				rr.ServerName = s
			default:
				return p.unknownKey(k, where+": tls", tlsKeys)
			}
			return nil
		})
	}
	return nil
}

// finishRemote completes a tool reference that set a remote-only key.
func (p *parser) finishRemote(r *ToolRef, n, pluginNode, toolsNode *yaml.Node, where string) (ToolRef, error) {
	rr := r.Remote
	switch {
	case rr.Addr == "" && pluginNode != nil:
		return *r, p.errf(n, "%s: name and tls belong to a remote tool server (remote: HOST:PORT), not to plugin %q", where, r.Plugin)
	case pluginNode != nil:
		return *r, p.errf(pluginNode, "%s: plugin and remote are exclusive (a reference is a binary or a remote tool server)", where)
	case rr.Addr == "":
		return *r, p.errf(n, "%s: plugin or remote is required", where)
	case r.SHA256 != "":
		return *r, p.errf(n, "%s: sha256 pins a plugin binary; remote tool server %s has none (its certificate identifies it)", where, rr.Addr)
	case r.Env != nil:
		return *r, p.errf(n, "%s: env names variables a launched plugin inherits; remote tool server %s is not launched", where, rr.Addr)
	case rr.tlsNode == nil:
		return *r, p.errf(n, "%s: remote tool server %s needs tls: {ca, cert, key} (mutual TLS is required)", where, rr.Addr)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"ca", rr.CA}, {"cert", rr.Cert}, {"key", rr.Key}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return *r, p.errf(rr.tlsNode, "%s: tls: %s required (mutual TLS needs the team CA, a client certificate and its key)", where, strings.Join(missing, ", "))
	}
	r.Text = rr.Name
	if r.Tools != nil {
		r.Text += ":" + strings.Join(r.Tools, ",")
		for _, t := range r.Tools {
			if err := p.checkTool(toolsNode, t, where, r.Text); err != nil {
				return *r, err
			}
		}
		r.Tools = unique(r.Tools)
	}
	rr.tlsNode = nil
	return *r, nil
}

// sameServer reports whether two references to one address agree on how to reach it.
func (rr *RemoteRef) sameServer(o *RemoteRef) bool {
	return rr.Addr == o.Addr && rr.Name == o.Name && rr.CA == o.CA && rr.Cert == o.Cert &&
		rr.Key == o.Key && rr.ServerName == o.ServerName
}

// mergeRemote checks that the references to one remote tool server agree.
func (p *PluginRef) mergeRemote() error {
	for i := range p.Refs {
		if r := &p.Refs[i]; !r.Remote.sameServer(p.Remote) {
			return conflict(p, "name or tls", &p.Refs[0], r)
		}
	}
	return nil
}
