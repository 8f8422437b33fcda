package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/audit"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/pluginpool"
	"github.com/kosong-host/kosong-host/host/server"
	"github.com/kosong-host/kosong-host/host/server/web"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers/registry"
)

type serveFlags struct {
	run             runFlags
	listen          string
	allowRemote     bool
	tlsCert, tlsKey string
	rotateToken     bool
	tokenEnv        string
	maxSessions     int
	maxBody         int64
	engine          engineFlags
}

func newServeCmd(g *globals) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve many sessions over an HTTP API (docs/server.md)",
		Long: `Serve many sessions in one process over an HTTP API (/v1, described by
the OpenAPI document at /v1/openapi.json; docs/server.md). Each session has its
own work dir, agent (found as run finds it, under the workspace trust rules),
model, approvals and history, saved as run saves sessions (kosong-host sessions
lists them). The provider, model, agent and approval flags are the defaults of
the sessions.

Every request but GET /healthz needs the header Authorization: Bearer TOKEN:
the token is made on first start in $XDG_STATE_HOME/kosong-host/server/token
(mode 0600; --rotate-token makes a new one), or comes from --token-env VAR.
--listen is 127.0.0.1:7433 by default, or a unix socket path (mode 0600); a
non-loopback address needs --allow-remote and TLS (--tls-cert, --tls-key).

SIGTERM (or Ctrl-C) stops taking turns, cancels the running ones (their
completed steps are saved, marked interrupted), saves every session and exits 0.

With --engine temporal --temporal HOST:PORT each new session is a session
workflow whose turns run on the workers (kosong-host worker), with the
workers' agent, provider and model; the server follows them, and a server
that stops (or dies) leaves their turns running: started again with the
same state folder, it attaches to them again by session id.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE:        func(cmd *cobra.Command, _ []string) error { return runServe(cmd, g, f) },
	}
	fl := cmd.Flags()
	r := &f.run
	fl.StringVar(&f.listen, "listen", server.DefaultListen, "HOST:PORT to listen on, or a unix socket path")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a non-loopback --listen address (needs --tls-cert and --tls-key)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file (PEM)")
	fl.BoolVar(&f.rotateToken, "rotate-token", false, "make a new bearer token (the old one stops working)")
	fl.StringVar(&f.tokenEnv, "token-env", "", "take the bearer token from this environment variable instead of the token file")
	fl.IntVar(&f.maxSessions, "max-sessions", server.DefaultMaxSessions, "open sessions at most")
	fl.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBody, "request body size limit in bytes")
	fl.StringVar(&r.provider, "provider", "", "model provider: "+strings.Join(registry.Known(), ", ")+" (default: as for run)")
	fl.StringVar(&r.model, "model", "", "a model alias of the configuration file, or a model name")
	fl.StringVar(&r.config, "config", "", "configuration file of providers and model aliases (default $XDG_CONFIG_HOME/kosong-host/config.yaml)")
	fl.StringVar(&r.baseURL, "base-url", "", "API base URL (overrides {PROVIDER}_BASE_URL)")
	fl.StringVar(&r.script, "script", "", "script file of the scripted provider")
	fl.Int64Var(&r.contextSize, "max-context-size", 0, "the model's context window in tokens (default: the model alias's max_context_size)")
	fl.IntVar(&r.maxSteps, "max-steps-per-turn", loop.DefaultMaxStepsPerTurn, "steps a turn may take before it is stopped")
	fl.DurationVar(&r.streamIdle, "stream-idle-timeout", 0, "fail a model response (and retry it) when its stream sends nothing for this long")
	fl.BoolVar(&r.yolo, "yolo", false, "sessions created without a mode approve every action")
	fl.BoolVar(&r.plan, "plan", false, "sessions created without a mode start in plan mode")
	addEngineFlags(fl, &f.engine)
	fl.Lookup("engine").Usage = "where new sessions' turns run: inprocess, or temporal (session workflows on the workers of --temporal; docs/server.md)"
	return cmd
}

func runServe(cmd *cobra.Command, g *globals, f *serveFlags) error {
	if f.run.maxSteps < 1 {
		return exitCode(2, fmt.Errorf("invalid --max-steps-per-turn %d: it must be at least 1", f.run.maxSteps))
	}
	if f.run.yolo && f.run.plan {
		return exitCode(2, errors.New("--yolo and --plan both set the sessions' mode: give one"))
	}
	if f.maxSessions < 1 || f.maxBody < 1024 {
		return exitCode(2, errors.New("--max-sessions must be at least 1 and --max-body at least 1024"))
	}
	switch {
	case f.engine.engine != "inprocess" && f.engine.engine != "temporal":
		return exitCode(2, fmt.Errorf("invalid --engine %q: use inprocess or temporal", f.engine.engine))
	case f.engine.engine == "temporal" && f.engine.temporal == "":
		return exitCode(2, errors.New("--engine temporal needs --temporal HOST:PORT: the Temporal server's frontend"))
	case f.engine.engine == "temporal" && f.engine.heartbeat < time.Second:
		return exitCode(2, fmt.Errorf("invalid --heartbeat-timeout %s: it must be at least 1s", f.engine.heartbeat))
	}
	dir, err := serverclient.Dir(os.Getenv)
	if err != nil {
		return exitCode(2, err)
	}
	token, made, err := server.Token(dir, f.tokenEnv, f.rotateToken, os.Getenv)
	if err != nil {
		return exitCode(2, err)
	}
	var open server.Opener
	var remote server.Remote
	if f.engine.engine == "temporal" {
		c, err := dialTemporal(cmd.Context(), &f.engine, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer c.Close()
		remote = &temporalRemote{c: c, e: &f.engine, maxSteps: f.run.maxSteps}
	} else {
		closeOpener, err := g.inProcessOpener(cmd, f, dir, &open)
		if err != nil {
			return err
		}
		defer closeOpener()
	}
	mode := serverclient.ModeAsk
	switch {
	case f.run.yolo:
		mode = serverclient.ModeYolo
	case f.run.plan:
		mode = serverclient.ModePlan
	}
	ln, loopback, err := server.Listen(server.ListenOptions{Addr: f.listen, AllowRemote: f.allowRemote, TLSCert: f.tlsCert, TLSKey: f.tlsKey})
	if err != nil {
		return exitCode(2, err)
	}
	srv, err := server.New(server.Config{Open: open, Remote: remote, Token: token, StateDir: dir, MaxSessions: f.maxSessions, MaxBody: f.maxBody,
		CheckHost: loopback, DefaultMode: mode, Version: buildVersion(), Logger: g.logger, Page: web.Handler()})
	if err != nil {
		ln.Close()
		return exitCode(2, err)
	}
	return serveUntilStopped(cmd, f, srv, ln, dir, made)
}

// inProcessOpener sets *open to the Opener of sessions run in serve's
// process; the returned func closes what the sessions share.
func (g *globals) inProcessOpener(cmd *cobra.Command, f *serveFlags, dir string, open *server.Opener) (func(), error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, exitCode(2, err)
	}
	base, err := g.conversationConfig(&f.run, wd)
	if err != nil {
		return nil, exitCode(2, err)
	}
	// The sessions share their plugin processes (docs/server.md, "Shared
	// plugin processes"); the pool stops them after the sessions closed.
	pool := pluginpool.New()
	base.Plugins = pool
	// The server's audit log: every session's records, beside each
	// session's own (docs/observability.md).
	if err := os.MkdirAll(dir, 0o700); err != nil {
		pool.Close()
		return nil, exitCode(2, err)
	}
	serverAudit, err := audit.Open(dir, audit.Options{})
	if err != nil {
		pool.Close()
		return nil, exitCode(2, err)
	}
	base.AuditAlso = serverAudit
	explicit := ""
	if fl := cmd.Flag("agent"); fl != nil && fl.Changed {
		explicit = g.agentPath
	}
	*open = func(ctx context.Context, req server.OpenRequest) (*server.Opened, error) {
		agentFile := explicit
		if req.Agent != "" {
			agentFile = req.Agent
		}
		sa, err := g.agentForSession(req.WorkDir, agentFile)
		if err != nil {
			return nil, err
		}
		cfg := base.For(conversation.Request{WorkDir: req.WorkDir, Resume: req.Resume, Ask: req.Ask, Questions: req.Questions,
			Yolo: req.Mode == serverclient.ModeYolo})
		cfg.AgentPath, cfg.AgentSource = sa.src.Path, sa.src
		cfg.Load.LockFile = "" // the session's agent's own
		cfg.Provider.IgnoreDotEnv = !sa.dotenv
		cfg.ReloadAllowed = sa.reload
		cfg.Approval = approval.ModeAsk
		cfg.Observer, cfg.DeferStart = req.Observer, true
		cfg.PlanMode = req.Mode == serverclient.ModePlan
		if req.Model != "" {
			cfg.Provider.Model = req.Model
		}
		conv, err := conversation.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		for _, n := range conv.Notes() {
			g.logger.Info(n, "session", conv.ID())
		}
		file := sa.src.Path
		if sa.src.Builtin {
			file = "built-in default"
		}
		return &server.Opened{Conv: conv, AgentFile: file, Note: sa.note}, nil
	}
	// The pool stops the plugins after the sessions closed.
	return func() { serverAudit.Close(); pool.Close() }, nil
}

// serveUntilStopped serves srv on ln until SIGINT or SIGTERM.
func serveUntilStopped(cmd *cobra.Command, f *serveFlags, srv *server.Server, ln net.Listener, dir string, made bool) error {
	stderr := cmd.ErrOrStderr()
	ignoreBrokenPipe()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	url := serveURL(ln.Addr().String(), f)
	how := "token in " + dir + "/token"
	switch {
	case f.tokenEnv != "":
		how = "token from $" + f.tokenEnv
	case made:
		how = "new token in " + dir + "/token"
	}
	fmt.Fprintf(stderr, "kosong-host serve: listening on %s (%s)\n", url, how)
	select {
	case err := <-served:
		srv.Shutdown()
		return exitCode(1, err)
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "kosong-host serve: stopping: cancelling the running turns and saving the sessions")
	srv.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	fmt.Fprintln(stderr, "kosong-host serve: stopped; every session is saved")
	return nil
}

// serveURL is the URL clients use for addr.
func serveURL(addr string, f *serveFlags) string {
	if server.IsSocket(f.listen) {
		return "unix://" + f.listen
	}
	if f.tlsCert != "" {
		return "https://" + addr
	}
	return "http://" + addr
}
