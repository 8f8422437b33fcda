package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/frontend/wire"
)

// addWireFlag adds --wire to run.
func addWireFlag(fl *pflag.FlagSet, f *runFlags) {
	fl.BoolVar(&f.wire, "wire", false, "serve the wire protocol on stdio instead of the terminal: JSON-RPC 2.0, one message a line (docs/wire.md)")
}

// runWire serves the wire protocol: the agent and provider of the command
// line, one conversation in the current folder (or --resume/-c's session).
func runWire(cmd *cobra.Command, g *globals, f *runFlags) error {
	if f.maxSteps < 1 {
		return exitCode(2, fmt.Errorf("invalid --max-steps-per-turn %d: it must be at least 1", f.maxSteps))
	}
	if f.prompt != "" || f.interactive || f.outputFormat != "text" {
		return exitCode(2, errors.New("--wire reads its prompts from the client: -p, -i and --output-format do not go with it"))
	}
	wd, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	req := conversation.Request{WorkDir: wd, Resume: f.resume, Yolo: f.yolo}
	if f.cont || f.resume != "" {
		s, _, err := openSessionID(f, wd)
		if err != nil {
			return exitCode(2, err)
		}
		req.Resume = s
	}
	cfg, err := g.conversationConfig(f, wd)
	if err != nil {
		return exitCode(2, err)
	}
	ignoreBrokenPipe()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The one conversation opens once the client's first message says
	// whether it answers questions.
	open := func(ctx context.Context, req conversation.Request) (*conversation.Conversation, error) {
		return openConversation(ctx, cfg.For(req), cmd.ErrOrStderr())
	}
	err = wire.Serve(ctx, wire.Config{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Open: open,
		Request: req, ServerName: "kosong-host", Version: buildVersion(), Logger: g.logger})
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitCode(2, err)
	}
	return nil
}
