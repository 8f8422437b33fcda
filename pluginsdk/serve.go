package pluginsdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Serve serves the given tools from this binary to the kosong-host that
// started it, and returns when the host ends the plugin, after killing the
// process groups registered with TrackProcessGroup. Logs go to stderr as
// hclog JSON, which the host re-logs (see Logger).
//
// Started by a host (the handshake cookie KOSONG_PLUGIN_MAGIC_COOKIE is
// set), a plugin that cannot serve does not return: Serve writes why on
// stderr, in one line the host recognises and quotes, and exits with
// status 1. A tool declared wrongly (see Definition.Err: an old-style
// `jsonschema:"description=..."` tag, a constructor of the wrong shape)
// gives
//
//	kosong-plugin: failed to declare its tools: tool Echo: ...
//
// and the host reports "PATH is a kosong plugin that failed to declare its
// tools: tool Echo: ..."; any other failure (the TLS material, the
// arguments) says "failed to start". So calling Serve as a statement,
// ignoring its result, is enough for a plugin.
//
// Otherwise Serve returns its errors: the declaration errors, and
// ErrNotLaunched (pluginrpc.ErrNotLaunched) when the binary was run by
// hand rather than by kosong-host. Run by hand with --describe, the binary
// prints its tools as JSON and Serve returns nil.
//
// Given --listen ADDR --ca FILE --cert FILE --key FILE (or
// KOSONG_PLUGIN_LISTEN, KOSONG_PLUGIN_CA, KOSONG_PLUGIN_CERT,
// KOSONG_PLUGIN_KEY), the binary is a remote tool server instead: see
// ServeNetwork.
//
//	func main() {
//		if err := pluginsdk.Serve(tools...); err != nil {
//			fmt.Fprintln(os.Stderr, err) // run by hand: say so
//			os.Exit(1)
//		}
//	}
func Serve(defs ...Definition) error {
	what, err := serve(defs)
	if err != nil && launchedByHost() {
		fmt.Fprintln(os.Stderr, pluginrpc.FailureLine(what, err))
		os.Exit(1)
	}
	return err
}

// launchedByHost reports whether a kosong host started this process: the
// go-plugin handshake cookie is set.
func launchedByHost() bool {
	return os.Getenv(pluginrpc.Handshake.MagicCookieKey) == pluginrpc.Handshake.MagicCookieValue
}

// serve is Serve without the exit; what says what failed
// (pluginrpc.FailedToDeclare or FailedToStart).
func serve(defs []Definition) (what string, err error) {
	if err := checkDefinitions(defs); err != nil {
		return pluginrpc.FailedToDeclare, err
	}
	if len(os.Args) > 1 && os.Args[1] == "--describe" {
		order, byName := index(defs)
		b, err := pluginrpc.MarshalDescription(describe(order, byName))
		if err != nil {
			return pluginrpc.FailedToStart, err
		}
		_, err = os.Stdout.Write(append(b, '\n'))
		return pluginrpc.FailedToStart, err
	}
	if n, ok, err := NetworkFromArgs(networkArgs(os.Args[1:]), os.Getenv); err != nil || ok {
		if err != nil {
			return pluginrpc.FailedToStart, err
		}
		return pluginrpc.FailedToStart, ServeNetwork(n, defs...)
	}
	logger := pluginrpc.NewLogger()
	defer killTrackedGroups()
	return pluginrpc.FailedToStart, pluginrpc.Serve(pluginrpc.ServeConfig{Impl: newServer(defs, logger), Logger: logger,
		Overrun: exitWithGroups, Starting: watchParent})
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
