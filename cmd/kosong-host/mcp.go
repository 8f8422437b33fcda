package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/mcpserver"
)

func newMCPCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the agent's tools over MCP",
	}
	cmd.AddCommand(newMCPServeCmd(g))
	return cmd
}

func newMCPServeCmd(g *globals) *cobra.Command {
	var (
		httpAddr    string
		allowRemote bool
		yolo        bool
		tokenEnv    string
		idle        time.Duration
		maxSessions int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the agent's tools (plugins and MCP servers) as an MCP server, over stdio or --http",
		Long: `Serve the tools of the agent (--agent) as an MCP server: its plugins' tools and
the tools of its own MCP servers, with their schemas and descriptions.

Over stdio by default (stdout carries the protocol; logs go to stderr), or
over streamable HTTP at http://ADDR/mcp with --http ADDR. ADDR must be a
loopback address (127.0.0.1:PORT, localhost:PORT, [::1]:PORT) unless
--allow-remote is given: the tools may run commands and edit files.
Every HTTP request must carry "Authorization: Bearer TOKEN" (401 otherwise):
the token is generated at start and printed on stderr, or read from the
environment variable named by --token-env (at least 16 characters).
A session with no request for --session-timeout (default 10m; 0: never) is
closed, and at most --max-sessions (default 100) are open: a new session
closes the least recently used one with no request in flight (its client
gets 404 and may initialize again), or is refused with 503 when every
session has a request in flight.

Approvals the tools ask for are asked of the MCP client through elicitation
when it supports it (approve, approve for session, reject with feedback);
for a client that does not, the call is not run and its result says that
approvals need elicitation or --yolo. --yolo approves everything without
asking. Tool failures and rejections are isError results.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var token string
			switch {
			case httpAddr == "" && tokenEnv != "":
				return exitCode(2, fmt.Errorf("--token-env is for --http: over stdio there is no token"))
			case httpAddr == "":
			case tokenEnv != "":
				token = os.Getenv(tokenEnv)
				if token == "" {
					return exitCode(2, fmt.Errorf("--token-env %s: the variable is not set or empty", tokenEnv))
				}
				if err := mcpserver.CheckToken(token); err != nil {
					return exitCode(2, fmt.Errorf("--token-env %s: %v", tokenEnv, err))
				}
			default:
				var err error
				if token, err = mcpserver.NewToken(); err != nil {
					return exitCode(1, err)
				}
			}
			if httpAddr != "" {
				if err := mcpserver.CheckAddr(httpAddr, allowRemote); err != nil {
					return exitCode(2, err)
				}
			}
			for _, name := range []string{"session-timeout", "max-sessions"} {
				if httpAddr == "" && cmd.Flags().Changed(name) {
					return exitCode(2, fmt.Errorf("--%s is for --http: over stdio there is one session", name))
				}
			}
			if idle < 0 {
				return exitCode(2, fmt.Errorf("invalid --session-timeout %s: use a positive duration, or 0 to keep idle sessions", idle))
			}
			if idle == 0 {
				idle = -1 // mcpserver's "never"
			}
			if maxSessions < 1 {
				return exitCode(2, fmt.Errorf("invalid --max-sessions %d: at least 1", maxSessions))
			}
			approvals := mcpserver.NewApprovals(yolo)
			return g.withAgent(cmd, approvals, func(ctx context.Context, a *agent.Agent) error {
				srv := mcpserver.New(a.Toolset, approvals, mcpserver.Options{Name: "kosong-host", Version: buildVersion(),
					Logger: g.logger, Instructions: fmt.Sprintf("The tools of the kosong-host agent %q.", a.Spec.Name),
					SessionTimeout: idle, MaxSessions: maxSessions})
				if httpAddr == "" {
					serveGC(os.Getenv)
					g.logger.Info("serving MCP over stdio", "agent", a.Spec.Name, "tools", len(a.Toolset.Names()))
					if err := srv.Run(ctx, &mcpserver.StdioTransport{}); err != nil {
						return exitCode(1, fmt.Errorf("mcp serve: %w", err))
					}
					return nil
				}
				ln, err := net.Listen("tcp", httpAddr)
				if err != nil {
					return exitCode(2, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "kosong-host: serving the tools of agent %q over MCP at http://%s%s\n", a.Spec.Name, ln.Addr(), mcpserver.Path)
				if tokenEnv != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "kosong-host: clients must send the header: Authorization: Bearer $%s\n", tokenEnv)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "kosong-host: clients must send the header: Authorization: Bearer %s\n", token)
				}
				if err := srv.ServeHTTP(ctx, ln, token); err != nil {
					return exitCode(1, fmt.Errorf("mcp serve: %w", err))
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&httpAddr, "http", "", "serve streamable HTTP on ADDR (e.g. 127.0.0.1:8080) instead of stdio")
	fl.BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --http address")
	fl.BoolVar(&yolo, "yolo", false, "approve every action without asking")
	fl.DurationVar(&idle, "session-timeout", mcpserver.DefaultSessionTimeout, "with --http, close a session that had no request for this long (0: never)")
	fl.IntVar(&maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "with --http, the most sessions open at once: a new one closes the least recently used idle session")
	fl.StringVar(&tokenEnv, "token-env", "", "with --http, read the bearer token clients must send from the environment variable VAR (default: a generated token, printed on stderr)")
	return cmd
}

// buildVersion is the module version of the binary, "(devel)" in a checkout.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// serveGC lets the heap of a stdio server grow to five times what is live
// before a collection (GOGC 400), unless GOGC says otherwise: its live heap
// is small, and every call leaves garbage, so at the default the collector
// took a sixth of the server's CPU. It also runs the server's goroutines on
// one thread at a time (serveProcs).
func serveGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if n := serveProcs(getenv); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// serveProcs is the GOMAXPROCS of a stdio server: 1, unless GOMAXPROCS says
// otherwise (0: leave it). A call hands over from goroutine to goroutine
// (stdin, the go-sdk, the plugin's stream, stdout), and with a second
// processor each hand-over wakes another thread, which on a busy machine
// waits for a core; the tools' work runs in their plugins' processes. On
// one processor the echo call of BenchmarkMCPServeFloor took 2-4 fewer
// context switches and 7-14 % less CPU.
func serveProcs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	return 1
}
