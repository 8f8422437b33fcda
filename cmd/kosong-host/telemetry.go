package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/providers/config"
)

// telemetryFlushTimeout bounds the export of the last spans at exit.
const telemetryFlushTimeout = 5 * time.Second

// startTelemetry turns OpenTelemetry on when the OTEL_* variables, the
// configuration file's telemetry block or the admin policy's forced
// endpoint ask for it (see docs/observability.md: the variables win over
// the file, the policy over both); a built-in plugin's process
// (plugin-serve NAME) exports its own spans as "kosong-host plugin NAME",
// to where the host's environment for it says. stop flushes what is left.
func startTelemetry(args []string) (stop func(), err error) {
	opts := telemetry.Options{Getenv: os.Getenv}
	if len(args) >= 2 && args[0] == pluginServeCmd {
		opts.ServiceName = "kosong-host plugin " + args[1]
	} else {
		fc, err := telemetry.LoadFileConfig(configArg(args))
		if err != nil {
			return nil, err
		}
		fc.Apply(&opts)
		pol, err := adminPolicy()
		if err != nil {
			return nil, err
		}
		opts.ForcedEndpoint = pol.Forced.TelemetryEndpoint
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

// configArg is the configuration file of the command line (--config FILE
// or --config=FILE, read before the flags are parsed), else the default.
func configArg(args []string) string {
	path := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			path = v
		} else if a == "--config" && i+1 < len(args) {
			path = args[i+1]
		}
	}
	if path == "" {
		return config.DefaultPath(os.Getenv)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path
}
