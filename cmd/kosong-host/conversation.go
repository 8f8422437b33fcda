package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// conversationConfig is what the command line says of the conversations
// it opens (conversation.Open) or checks (conversation.Check): the agent
// found by findAgent, the provider and model of
// --provider/--model/--base-url/--script/--config, the limits, and the
// load options only the command knows (plugin dirs, the built-in
// plugins, the launcher, the logger, the timeouts, the sandbox).
func (g *globals) conversationConfig(f *runFlags, workDir string) (conversation.Config, error) {
	load, err := g.loadOptions(nil, "", "")
	if err != nil {
		return conversation.Config{}, err
	}
	return conversation.Config{
		AgentPath:   g.agentPath,
		AgentSource: g.agentSource,
		Provider: registry.Options{Provider: f.provider, Model: f.model, BaseURL: f.baseURL, Script: f.script,
			StreamIdleTimeout: f.streamIdle, IgnoreDotEnv: !g.dotenvTrusted},
		MaxContextSize:  f.contextSize,
		MaxStepsPerTurn: f.maxSteps,
		Limits:          f.limits,
		ConfigPath:      f.config,
		WorkDir:         workDir,
		ProjectFolder:   g.agentFolder,
		WatchAgent:      f.watchAgent,
		PlanMode:        f.plan,
		ReloadAllowed:   g.reloadAllowed(),
		Load:            load,
	}, nil
}

// openConversation opens the conversation of cfg and prints its notes on
// w (stderr): where a provider's base URL came from when it is not the
// default, a .env base URL that was ignored, and built-in plugins that
// installed binaries replace without a pin.
func openConversation(ctx context.Context, cfg conversation.Config, w io.Writer) (*conversation.Conversation, error) {
	conv, err := conversation.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, n := range conv.Notes() {
		fmt.Fprintln(w, n)
	}
	if n := agent.OverrideNotice(conv.Agent().Overrides()); n != "" {
		fmt.Fprintln(w, "warning: "+n)
	}
	return conv, nil
}
