package pluginsdk

import (
	"context"

	"github.com/hashicorp/go-hclog"
)

// Logger returns the logger of the running tool call: the plugin's logger,
// named for the tool and carrying the call's id. Its lines go to the plugin's
// stderr as hclog JSON, which the host re-logs at their level. Outside a call
// it returns a logger that discards everything.
//
// A constructor can also take an hclog.Logger parameter: it receives the
// plugin's logger named for the tool.
func Logger(ctx context.Context) hclog.Logger {
	if tc, ok := ctx.Value(toolCallKey{}).(toolCall); ok && tc.logger != nil {
		return tc.logger
	}
	return hclog.NewNullLogger()
}
