package main

import (
	"context"
	"os"
	"time"

	"github.com/kosong-host/kosong-host/host/telemetry"
)

// telemetryFlushTimeout bounds the export of the last spans at exit.
const telemetryFlushTimeout = 5 * time.Second

// startTelemetry turns OpenTelemetry on when the OTEL_* variables ask
// for it (see docs/observability.md); a built-in plugin's process
// (plugin-serve NAME) exports its own spans as "kosong-host plugin NAME".
// stop flushes what is left.
func startTelemetry(args []string) (stop func(), err error) {
	opts := telemetry.Options{Getenv: os.Getenv}
	if len(args) >= 2 && args[0] == pluginServeCmd {
		opts.ServiceName = "kosong-host plugin " + args[1]
	}
	shutdown, err := telemetry.Setup(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
		defer cancel()
		_ = shutdown(ctx)
	}, nil
}
