// Package bridge lets plugintest serve a list of pluginsdk.Definition
// in-process without pluginsdk exporting its server: pluginsdk sets NewServer
// when it is initialised.
package bridge

import (
	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// NewServer returns the server of defs (a []pluginsdk.Definition), or the
// declaration errors that would make Serve refuse them.
var NewServer func(defs any, logger hclog.Logger) (pluginrpc.Server, error)
