package pluginsdk

import (
	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/internal/bridge"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

func init() {
	bridge.NewServer = func(defs any, logger hclog.Logger) (pluginrpc.Server, error) {
		ds := defs.([]Definition)
		if err := checkDefinitions(ds); err != nil {
			return nil, err
		}
		return newServer(ds, logger), nil
	}
}
