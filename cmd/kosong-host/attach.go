package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kosong-host/kosong-host/host/remote"
	"github.com/kosong-host/kosong-host/host/repl"
	"github.com/kosong-host/kosong-host/host/serverclient"
)

// attachFlags are a client's flags for a session of a server (run
// --server, acp --server): --server and --token-env, and --session.
type attachFlags struct {
	serverFlag
	session string
}

// addAttachFlags adds --server and --token-env, and --session when
// withSession.
func addAttachFlags(cmd *cobra.Command, a *attachFlags, withSession bool) {
	a.serverFlag.add(cmd)
	if withSession {
		cmd.Flags().StringVar(&a.session, "session", "", "with --server: attach to this session of the server (default: a new session of the current folder)")
	}
}

// attachedFlagsError refuses the run flags that belong to the server
// (the provider, the agent's configuration, the session's history) or to
// a run of this process.
func attachedFlagsError(fl *pflag.FlagSet) error {
	for _, name := range []string{"prompt", "provider", "script", "config", "base-url", "resume", "continue", "wire",
		"max-context-size", "max-steps-per-turn", "stream-idle-timeout", "watch-agent", "output-format"} {
		if f := fl.Lookup(name); f != nil && f.Changed {
			return fmt.Errorf("--%s does not go with --server: the server runs the session with its own settings", name)
		}
	}
	return nil
}

// runAttached is `run --server URL [--session ID]`: the terminal attached
// to a session of the server. Leaving it (Ctrl-D, /exit) detaches; the
// session goes on in the server and --session ID attaches again, the
// session's events replayed.
func runAttached(ctx context.Context, fl *pflag.FlagSet, f *runFlags, a *attachFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return exitCode(2, errors.New("--server runs the terminal: give the messages in it, not as arguments"))
	}
	if err := attachedFlagsError(fl); err != nil {
		return exitCode(2, err)
	}
	if !isTerminal(stdin) && !f.interactive {
		return exitCode(2, errors.New("--server needs a terminal on stdin (or --interactive to read the messages line by line)"))
	}
	client, err := a.client()
	if err != nil {
		return exitCode(2, err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	var info serverclient.Session
	if a.session == "" {
		wd, err := os.Getwd()
		if err != nil {
			return exitCode(2, err)
		}
		req := serverclient.CreateSession{Cwd: wd, Model: f.model}
		switch {
		case f.yolo && f.plan:
			return exitCode(2, errors.New("--yolo and --plan: give one of them"))
		case f.yolo:
			req.Mode = serverclient.ModeYolo
		case f.plan:
			req.Mode = serverclient.ModePlan
		}
		if info, err = client.CreateSession(ctx, req); err != nil {
			return exitCode(1, err)
		}
	} else {
		if f.model != "" || f.yolo || f.plan {
			return exitCode(2, errors.New("--model, --yolo and --plan choose a new session's settings: they do not go with --session"))
		}
		if info, err = client.Session(ctx, a.session); err != nil {
			if serverclient.IsCode(err, serverclient.CodeNotFound) {
				return exitCode(2, fmt.Errorf("unknown session %s on %s (kosong-host sessions --server %s lists them)", a.session, a.url, a.url))
			}
			return exitCode(1, err)
		}
	}
	f.yolo = false // the server's session decides; the terminal asks what it is asked
	fe, err := newFrontEnd(f, runMode{}, false, stdin, stdout, stderr)
	if err != nil {
		return exitCode(2, err)
	}
	defer fe.close()
	fe.printer.Start(repl.Info{SessionID: info.ID, Agent: info.Agent, Provider: info.Provider, Model: info.Model,
		WorkDir: info.Cwd, Approval: info.Mode, Server: client.BaseURL()})
	notice := func(text string) {
		fe.printer.Pause()
		fmt.Fprintln(stdout, text)
	}
	rs, err := remote.Attach(ctx, remote.Config{Client: client, ID: info.ID, Observer: fe.printer, Ask: fe.ask,
		Questions: fe.questions, Notice: notice})
	if err != nil {
		return exitCode(1, err)
	}
	err = fe.repl.Run(ctx, rs)
	rs.Close()
	fmt.Fprintf(stderr, "detached; the session goes on in the server: kosong-host run --server %s --session %s attaches again\n", a.url, info.ID)
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitCode(1, err)
	}
	return nil
}
