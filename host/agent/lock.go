package agent

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

// LockFileFor is the lock file of a run of the agent file at agentPath:
// the one beside it (agent.yaml -> agent.lock.yaml). It pins the plugins of
// every agent file the run loads: the agent's own (its extend chain
// included) and its subagents', recursively.
func LockFileFor(agentPath string) string {
	if abs, err := filepath.Abs(agentPath); err == nil {
		agentPath = abs
	}
	return pins.PathFor(agentPath)
}

// AgentFiles are the agent files a run of s loads: s itself (its extend
// chain merged in), then each subagent's spec, recursively, each file once,
// in a stable order.
func AgentFiles(s *spec.Spec, defaultAgentPath string) ([]*spec.Spec, error) {
	out := []*spec.Spec{s}
	seen := map[string]bool{s.Path: true}
	for i := 0; i < len(out); i++ {
		for _, name := range slices.Sorted(maps.Keys(out[i].Subagents)) {
			sub := out[i].Subagents[name]
			if seen[sub.Path] {
				continue
			}
			seen[sub.Path] = true
			ss, err := spec.Load(sub.Path, spec.LoadOptions{DefaultAgentPath: defaultAgentPath})
			if err != nil {
				return nil, fmt.Errorf("subagent %s of %s: %w", name, out[i].Path, err)
			}
			out = append(out, ss)
		}
	}
	return out, nil
}

// RunPlugin is one plugin of a run: its reference, the agent file that
// names it and where it resolves.
type RunPlugin struct {
	Ref       spec.PluginRef
	AgentFile string
	Resolved  Resolved
	// Err is why the plugin could not be resolved.
	Err error
}

// RunPlugins lists the plugins of every agent file a run of s loads, each
// plugin name once (the first agent file naming it). One name leading to
// two different binaries is an error: the lock file pins plugins by name.
func RunPlugins(s *spec.Spec, defaultAgentPath string, dirs []string, builtins map[string]Builtin) ([]RunPlugin, error) {
	files, err := AgentFiles(s, defaultAgentPath)
	if err != nil {
		return nil, err
	}
	var out []RunPlugin
	index := map[string]int{}
	for _, f := range files {
		refs, err := f.Plugins()
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			if ref.Remote != nil {
				continue // a remote tool server has no binary here: its certificate identifies it
			}
			res, rerr := Resolve(ref, dirs, builtins)
			if i, ok := index[ref.Name]; ok {
				if prev := out[i]; rerr == nil && prev.Err == nil && prev.Resolved.Path != res.Path {
					return nil, fmt.Errorf("plugin %s is %s in %s but %s in %s: one lock file pins plugins by name; rename one of them",
						ref.Name, prev.Resolved.Path, prev.AgentFile, res.Path, f.Path)
				}
				continue
			}
			index[ref.Name] = len(out)
			out = append(out, RunPlugin{Ref: ref, AgentFile: f.Path, Resolved: res, Err: rerr})
		}
	}
	return out, nil
}

// RunMCPServer is one stdio MCP server of a run whose command is a file (a
// path, not a name looked up in PATH): what the lock file pins.
type RunMCPServer struct {
	Config spec.MCPServer
	// AgentFile is the agent or MCP config file that names it.
	AgentFile string
}

// RunMCPServers lists the stdio MCP servers of every agent file a run of s
// loads (and of the MCP config files given), each name once, whose
// command is a path. One name leading to two different commands is an
// error, as for plugins.
func RunMCPServers(s *spec.Spec, defaultAgentPath string, configFiles []string) ([]RunMCPServer, error) {
	files, err := AgentFiles(s, defaultAgentPath)
	if err != nil {
		return nil, err
	}
	var out []RunMCPServer
	index := map[string]int{}
	for i, f := range files {
		cfgs := f.MCPServers
		if i == 0 {
			if cfgs, err = mcpclient.Configs(f, configFiles); err != nil {
				return nil, err
			}
		}
		for _, cfg := range cfgs {
			if !cfg.Stdio() || filepath.Base(cfg.Command) == cfg.Command {
				continue
			}
			if j, ok := index[cfg.Name]; ok {
				if prev := out[j]; prev.Config.Command != cfg.Command {
					return nil, fmt.Errorf("MCP server %s is %s in %s but %s in %s: one lock file pins MCP servers by name; rename one of them",
						cfg.Name, prev.Config.Command, prev.AgentFile, cfg.Command, cfg.File)
				}
				continue
			}
			index[cfg.Name] = len(out)
			out = append(out, RunMCPServer{Config: cfg, AgentFile: cfg.File})
		}
	}
	return out, nil
}
