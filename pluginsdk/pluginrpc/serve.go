package pluginrpc

import (
	"crypto/tls"
	"errors"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
)

// ServeConfig configures Serve.
type ServeConfig struct {
	Impl Server
	// Logger is go-plugin's logger and the one overruns are logged to.
	Logger hclog.Logger
	// Overrun runs when a tool overruns the cancel grace period (see Plugin).
	Overrun func()
	// Starting, when set, runs once the process is known to be launched by
	// a host, just before serving.
	Starting func()
}

// ErrNotLaunched is returned by Serve when the binary was not started by
// kosong-host (the handshake cookie is missing).
var ErrNotLaunched = errors.New("this binary is a kosong-host tool plugin: kosong-host starts it (list its tools with --describe)")

// Serve serves cfg.Server to the host that launched this process, with the
// one-time TLS material the host handed over, and returns when the host
// ends the plugin.
func Serve(cfg ServeConfig) error {
	restoreGC()
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		return ErrNotLaunched
	}
	tlsCfg, err := TLSFromEnv()
	if err != nil {
		return err
	}
	sc := &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			ProtocolVersion: {PluginName: &Plugin{Impl: cfg.Impl, Logger: cfg.Logger, Overrun: cfg.Overrun}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, ServerOptions()...)...)
		},
		Logger: cfg.Logger,
	}
	if cfg.Starting != nil {
		cfg.Starting()
	}
	if tlsCfg != nil {
		sc.TLSProvider = func() (*tls.Config, error) { return tlsCfg, nil }
	}
	plugin.Serve(sc)
	return nil
}

// NewLogger returns a plugin process's logger: hclog JSON on stderr (which
// the host re-logs at each line's level), at the level named by LogLevelEnv.
func NewLogger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name: "plugin", Output: os.Stderr, JSONFormat: true, Level: hclog.LevelFromString(os.Getenv(LogLevelEnv)),
	})
}

// MarshalDescription renders a Description as the indented JSON of its wire
// form, which a plugin binary prints for --describe.
func MarshalDescription(d Description) ([]byte, error) {
	return protojson.MarshalOptions{Multiline: true}.Marshal(toProtoDescription(d))
}

// The collector the host deferred past package initialisation resumes
// once the plugin's start is over (restoreAfter), or earlier when the heap
// reaches startHeapLimit: a collection at once would only mark what package
// init allocated, on the CPU the host's other plugins are starting on.
const (
	restoreAfter   = time.Second
	startHeapLimit = 64 << 20
)

// restoreGC turns the garbage collector back on at the GOGC value of
// InitGCEnv, when the host deferred it past package initialisation.
func restoreGC() {
	v := os.Getenv(InitGCEnv)
	if v == "" {
		return
	}
	pct := gcPercent(v)
	limit := debug.SetMemoryLimit(startHeapLimit)
	time.AfterFunc(restoreAfter, func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
		// What package initialisation allocated is garbage by now; an idle
		// plugin would keep it (and the pages it took) until its next
		// collection, which an idle process may never reach.
		debug.FreeOSMemory()
	})
}

// gcPercent reads a GOGC value; anything but a positive percentage is the
// default, 100.
func gcPercent(v string) int {
	pct, err := strconv.Atoi(v)
	if err != nil || pct <= 0 {
		return 100
	}
	return pct
}
