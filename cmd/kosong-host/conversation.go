package main

import (
	"context"
	"slices"
	"time"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/frontend/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/prompt"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/subagent"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// conversationOpener builds the conversations of the ACP and wire front
// ends from the command line: the agent spec found by findAgent, the
// provider and model of --provider/--model/--script/--config (as run picks
// them), the system prompt rendered for the conversation's folder, the
// agent's plugins and MCP servers plus the front end's, its subagents, and
// the run loop.
func (g *globals) conversationOpener(f *runFlags) conversation.Opener {
	return func(ctx context.Context, req conversation.Request) (*conversation.Conversation, error) {
		s, err := loadAgentSpec(g.agentPath)
		if err != nil {
			return nil, err
		}
		if len(req.MCPServers) > 0 {
			cp := *s
			cp.MCPServers = append(slices.Clone(s.MCPServers), req.MCPServers...)
			s = &cp
		}
		sel, err := registry.Select(providerOptions(f, s, req.WorkDir))
		if err != nil {
			return nil, err
		}
		provider, contextSize := sel.Provider, int64(sel.MaxContextSize)
		if f.contextSize > 0 {
			contextSize = f.contextSize
		}
		system, err := prompt.Render(s.SystemPromptPath, s.SystemPromptArgs, prompt.Options{WorkDir: req.WorkDir})
		if err != nil {
			return nil, err
		}
		var sess *session.Session
		var history []providers.Message
		if req.Resume != "" {
			sess, history, err = session.Open(session.Options{}, req.Resume)
		} else {
			sess, err = session.New(session.Options{})
			if err == nil {
				err = sess.WriteMeta(session.Meta{WorkDir: req.WorkDir, Agent: s.Name, AgentFile: g.agentSource.String(), Created: time.Now()})
			}
		}
		if err != nil {
			return nil, err
		}
		events := &conversation.Relay{}
		guards, err := readGuardConfig(s, f.config)
		if err != nil {
			return nil, err
		}
		guard, err := guards.openGuard(f.config, req.WorkDir, sess.ID, events)
		if err != nil {
			return nil, err
		}
		approvals := conversation.NewApprovals(req.Ask, events)
		approvals.SetYolo(req.Yolo || f.yolo)
		opts, err := g.loadOptions(guard.decider(approvals), sess.ID, sess.Dir)
		if err != nil {
			return nil, err
		}
		opts.WorkDir = req.WorkDir
		opts.Questions = req.Questions
		opts.Model = &capability.Model{Provider: provider.Name(), Name: provider.Model(), Alias: sel.Alias,
			Capabilities: sel.Capabilities, CapabilitiesKnown: sel.CapabilitiesDeclared, MaxContextSize: contextSize}
		opts.OnProgress = func(p toolset.Progress) {
			events.Observe(loop.ToolProgress{ToolCallID: p.ToolCallID, ToolName: p.Tool, Progress: p.Progress,
				Total: p.Total, Message: p.Message})
		}
		a, err := agent.LoadSpec(ctx, s, opts)
		if err != nil {
			return nil, err
		}
		a.Source = g.agentSource
		if err := guard.attach(a, s, subagent.Config{Provider: provider, Options: opts,
			MaxStepsPerTurn: f.maxSteps, MaxContextSize: contextSize}); err != nil {
			a.Close()
			return nil, err
		}
		l, err := loop.New(guard.loopConfig(loop.Config{Provider: provider, Toolset: a.Toolset, System: system,
			History: history, MaxStepsPerTurn: f.maxSteps, Observer: events, MaxContextSize: contextSize}, a))
		if err != nil {
			a.Close()
			return nil, err
		}
		source := "startup"
		if req.Resume != "" {
			source = "resume"
		}
		end := guard.start(ctx, source)
		var conv *conversation.Conversation
		reload := func(ctx context.Context) (*agent.Reloaded, error) {
			res, err := a.Reload(ctx, guard.reload)
			events.Observe(reloadEvent(res, err))
			if err == nil && !conv.Running() {
				a.ApplyPending() // no step runs: take effect now
			}
			return res, err
		}
		conv = conversation.New(conversation.Parts{Session: sess, Loop: l, Toolset: a.Toolset, Approvals: approvals,
			Events: events, AgentName: s.Name, Reload: reload, Close: func() { end(); a.Close() }})
		return conv, nil
	}
}
