package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/frontend/acp"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers/registry"
)

func newACPCmd(g *globals) *cobra.Command {
	f, attach := &runFlags{}, &attachFlags{}
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim, Emacs)",
		Long: `Serve the Agent Client Protocol (agentclientprotocol.com) on stdin/stdout: an editor
starts kosong-host acp and talks to the agent through it. Each ACP session is a
kosong session of the editor's folder (session/load resumes one by id); the agent,
provider and model come from the same flags and configuration as run. Logs go to
stderr. In Zed's settings.json:

  "agent_servers": { "kosong-host": { "type": "custom", "command": "kosong-host", "args": ["acp"] } }

With --server URL the sessions are those of a kosong-host server (kosong-host serve):
session/new creates one there, session/load attaches to one by id, and other
clients (terminals, the web page) may watch and approve the same sessions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if attach.url != "" || attach.tokenEnv != "" {
				return acpAttached(cmd, g, f, attach)
			}
			if f.maxSteps < 1 {
				return exitCode(2, fmt.Errorf("invalid --max-steps-per-turn %d: it must be at least 1", f.maxSteps))
			}
			wd, err := os.Getwd()
			if err != nil {
				return exitCode(2, err)
			}
			cfg, err := g.conversationConfig(f, wd)
			if err != nil {
				return exitCode(2, err)
			}
			ignoreBrokenPipe()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Each ACP session is a conversation of the editor's folder.
			open := func(ctx context.Context, req conversation.Request) (*conversation.Conversation, error) {
				c := cfg.For(req)
				c.Provider.IgnoreDotEnv = !g.dotenvTrustedIn(req.WorkDir, cmd.ErrOrStderr())
				return openConversation(ctx, c, cmd.ErrOrStderr())
			}
			err = acp.Serve(ctx, acp.Config{Open: open, Yolo: f.yolo, Images: declaresImages(cfg), Name: "kosong-host",
				Title: "kosong-host", Version: buildVersion(), Logger: g.logger}, cmd.InOrStdin(), cmd.OutOrStdout())
			if err != nil && !errors.Is(err, context.Canceled) {
				return exitCode(1, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "model provider: "+strings.Join(registry.Known(), ", ")+" (default: as for run)")
	fl.StringVar(&f.model, "model", "", "a model alias of the configuration file, or a model name")
	fl.StringVar(&f.config, "config", "", "configuration file of providers and model aliases (default $XDG_CONFIG_HOME/kosong-host/config.yaml)")
	fl.StringVar(&f.baseURL, "base-url", "", "API base URL (overrides {PROVIDER}_BASE_URL)")
	fl.StringVar(&f.script, "script", "", "script file of the scripted provider")
	fl.Int64Var(&f.contextSize, "max-context-size", 0, "the model's context window in tokens (default: the model alias's max_context_size)")
	fl.IntVar(&f.maxSteps, "max-steps-per-turn", loop.DefaultMaxStepsPerTurn, "steps a turn may take before it is stopped")
	fl.BoolVar(&f.yolo, "yolo", false, "start sessions in the yolo mode (approve every action); the editor can switch modes")
	addAttachFlags(cmd, attach, false)
	return cmd
}

// declaresImages says whether the model cfg selects (by the flags and the
// configuration's default) declares image_in, for the ACP prompt
// capabilities announced before any session opens.
func declaresImages(cfg conversation.Config) bool {
	opts := cfg.Provider
	opts.WorkDir, opts.ConfigPath = cfg.WorkDir, cfg.ConfigPath
	sel, err := registry.Select(opts)
	return err == nil && sel.CapabilitiesDeclared && slices.Contains(sel.Capabilities, "image_in")
}

// ignoreBrokenPipe keeps a front end on stdio alive when its client goes
// away mid-turn: writes to the closed stdout fail (and are dropped) instead
// of SIGPIPE ending the process before the turn is cancelled and the
// session saved.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// acpAttached is `acp --server URL`: ACP on stdio, its sessions a server's.
func acpAttached(cmd *cobra.Command, g *globals, f *runFlags, a *attachFlags) error {
	if a.url == "" {
		return exitCode(2, errors.New("--token-env names a server's token: give --server URL too"))
	}
	if err := attachedFlagsError(cmd.Flags()); err != nil {
		return exitCode(2, err)
	}
	if cmd.Flags().Lookup("model").Changed {
		return exitCode(2, errors.New("--model does not go with --server: the server runs the session with its own settings"))
	}
	client, err := a.client()
	if err != nil {
		return exitCode(2, err)
	}
	ignoreBrokenPipe()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = acp.Serve(ctx, acp.Config{Server: client, Yolo: f.yolo, Images: true, Name: "kosong-host",
		Title: "kosong-host", Version: buildVersion(), Logger: g.logger}, cmd.InOrStdin(), cmd.OutOrStdout())
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitCode(1, err)
	}
	return nil
}
