package agent

import (
	"fmt"

	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// remoteSpec says how to reach the remote tool server ref names: its
// certificates are read here, so a missing or unusable file is a load
// failure naming the reference.
func remoteSpec(ref spec.PluginRef, opts Options) (plugin.Spec, error) {
	rr := ref.Remote
	tlsCfg, err := pluginrpc.NetworkTLS(rr.CA, rr.Cert, rr.Key, rr.ServerName)
	if err != nil {
		where := ref.Refs[0].Where()
		return plugin.Spec{}, fmt.Errorf("%s: remote tool server %s: %v", where, rr.Addr, err)
	}
	return plugin.Spec{
		Source: fmt.Sprintf("remote %s (%s)", ref.Name, rr.Addr),
		Config: plugin.Config{
			Name: ref.Name, Path: rr.Addr, Remote: &plugin.Remote{Addr: rr.Addr, TLS: tlsCfg},
			StartTimeout: opts.StartTimeout, Logger: opts.Logger, CancelGrace: opts.CancelGrace,
		},
		Tools: ref.Tools, Exclude: ref.Exclude, Timeout: ref.Timeout, ConfigFor: ref.ConfigFor,
	}, nil
}
