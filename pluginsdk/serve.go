package pluginsdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
)

// MaxMessageBytes caps every gRPC message between host and plugin.
const MaxMessageBytes = 16 << 20

// Serve serves the given tools from this binary to kosong-host and never
// returns. Logs go to stderr as hclog JSON, which the host re-logs.
//
// Run by hand with --describe, the binary prints its tools as JSON and exits.
func Serve(defs ...Definition) {
	if err := checkDefinitions(defs); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[0], err)
		os.Exit(1)
	}
	if len(os.Args) > 1 && os.Args[1] == "--describe" {
		order, byName := index(defs)
		b, _ := protojson.MarshalOptions{Multiline: true}.Marshal(describe(order, byName))
		os.Stdout.Write(append(b, '\n'))
		os.Exit(0)
	}
	logger := hclog.New(&hclog.LoggerOptions{
		Name: "plugin", Output: os.Stderr, JSONFormat: true, Level: hclog.LevelFromString(os.Getenv("KOSONG_PLUGIN_LOG_LEVEL")),
	})
	cfg := &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			ProtocolVersion: {PluginName: &GRPCPlugin{Definitions: defs, Logger: logger, Overrun: exitWithGroups}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
				grpc.MaxConcurrentStreams(math.MaxUint32))
			return grpc.NewServer(opts...)
		},
		Logger: logger,
	}
	if os.Getenv(TLSFDEnv) != "" {
		cfg.TLSProvider = tlsFromFD
	}
	watchParent()
	plugin.Serve(cfg)
	os.Exit(0)
}

func index(defs []Definition) ([]string, map[string]*Definition) {
	order := make([]string, 0, len(defs))
	byName := make(map[string]*Definition, len(defs))
	for i := range defs {
		order = append(order, defs[i].name)
		byName[defs[i].name] = &defs[i]
	}
	return order, byName
}

// checkDefinitions reports programming errors in the tool declarations:
// a binary that would serve broken tools does not start.
func checkDefinitions(defs []Definition) error {
	var errs []error
	seen := map[string]bool{}
	for _, d := range defs {
		if d.name == "" {
			errs = append(errs, errors.New("a tool has no name"))
		}
		if seen[d.name] {
			errs = append(errs, fmt.Errorf("tool %s is declared twice", d.name))
		}
		seen[d.name] = true
		if d.err != nil {
			errs = append(errs, d.err)
		}
		if !json.Valid(d.schema) {
			errs = append(errs, fmt.Errorf("tool %s: schema is not valid JSON", d.name))
		}
	}
	if len(defs) == 0 {
		errs = append(errs, errors.New("no tools to serve"))
	}
	return errors.Join(errs...)
}
