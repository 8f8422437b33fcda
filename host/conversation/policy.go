package conversation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/policy"
	"github.com/kosong-host/kosong-host/host/spec"
)

// adminPolicy is the admin policy in force for cfg (host/policy):
// the file KOSONG_HOST_POLICY names, else /etc/kosong-host/policy.yaml.
func adminPolicy(cfg Config) (*policy.Policy, error) {
	getenv := cfg.Load.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return policy.Load(policy.Path(getenv))
}

// checkPolicy applies the admin policy to a conversation before anything
// of it starts, whatever its front end: yolo where the policy forbids it
// (--yolo, a client's yolo mode), an MCP server it does not allow, a
// plugin source it does not allow, and a plugin a project agent file adds
// where project_plugins is false; for s and every subagent's agent file.
// It returns the policy, whose yolo rule the approval flow keeps
// (yoloRefusal).
func checkPolicy(cfg Config, s *spec.Spec) (*policy.Policy, error) {
	pol, err := adminPolicy(cfg)
	if err != nil {
		return nil, err
	}
	if pol.Path == "" {
		return pol, nil
	}
	if cfg.Yolo || cfg.Approval == approval.ModeYolo {
		if err := yoloRefusal(pol); err != nil {
			return nil, err
		}
	}
	files, err := agent.AgentFiles(s, cfg.Load.DefaultAgentPath)
	if err != nil {
		return nil, err
	}
	return pol, checkSpecs(pol, files, cfg)
}

// checkSpecs applies pol to the MCP servers (with those of the MCP
// configuration files, --mcp-config) and plugins of agent files.
func checkSpecs(pol *policy.Policy, files []*spec.Spec, cfg Config) error {
	roots := cfg.projectRoots()
	var errs []error
	for _, f := range files {
		servers, err := mcpclient.Configs(f, cfg.Load.MCPConfigFiles)
		if err != nil {
			servers = f.MCPServers // the load reports the bad file
		}
		for _, m := range servers {
			if m.URL != "" {
				errs = append(errs, pol.CheckMCPURL(m.Name, m.URL))
			} else {
				errs = append(errs, pol.CheckMCPCommand(m.Name, m.Command))
			}
		}
		refs, err := f.Plugins()
		if err != nil {
			return err
		}
		for _, ref := range refs {
			errs = append(errs, checkPlugin(pol, ref, roots))
		}
	}
	return errors.Join(errs...)
}

// checkPlugin applies pol to one plugin: its source must be allowed, and
// a project agent file may add a plugin that brings its own code (a
// local binary by path, or a source) only where project_plugins allows
// it. A bare name (an installed or built-in plugin) adds no code.
func checkPlugin(pol *policy.Policy, ref spec.PluginRef, roots []string) error {
	if ref.Source != "" {
		r, err := distribution.ParseRef(ref.Source, ref.Version)
		if err != nil {
			return fmt.Errorf("plugin %s: %v", ref.Name, err)
		}
		if err := pol.CheckSource(r.Repo()); err != nil {
			return fmt.Errorf("plugin %s: %v", ref.Name, err)
		}
	}
	if ref.Source == "" && ref.Path == "" {
		return nil
	}
	for _, r := range ref.Refs {
		if underAny(r.File, roots) {
			return pol.CheckProjectPlugin(ref.Name, r.File)
		}
	}
	return nil
}

// projectRoots are the folders whose agent files are the project's: the
// work dir and the project folder.
func (c Config) projectRoots() []string {
	var out []string
	for _, d := range []string{c.WorkDir, c.ProjectFolder} {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

// underAny reports whether file is in one of the folders roots.
func underAny(file string, roots []string) bool {
	for _, root := range roots {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// yoloRefusal is the policy's refusal of yolo, in the words of every front
// end (--yolo, /yolo, an editor's or a client's yolo mode); nil where yolo
// is allowed.
func yoloRefusal(pol *policy.Policy) error {
	var r *policy.Refusal
	if err := pol.CheckYolo(); errors.As(err, &r) {
		r.What = "yolo (approving every action without asking)"
		return r
	}
	return nil
}

// checkSubagentPolicy applies pol to a subagent's agent file as it opens
// (its plugins and MCP servers start then).
func (asm *assembly) checkSubagentPolicy(s *spec.Spec) error {
	if asm.policy == nil || asm.policy.Path == "" {
		return nil
	}
	return checkSpecs(asm.policy, []*spec.Spec{s}, asm.cfg)
}

// CheckPolicy applies the admin policy to cfg's agent as Open does, for a
// command that loads the agent's plugins without opening a conversation
// (tools list, describe and call).
func CheckPolicy(cfg Config) error {
	s, err := cfg.loadSpec()
	if err != nil {
		return err
	}
	_, err = checkPolicy(cfg, s)
	return err
}

// reloadAllowed is the Allow of the conversation's reloads: cfg's own
// (ReloadAllowed), then the admin policy on the agent's files as they are
// now, before a plugin they add starts.
func reloadAllowed(cfg Config, pol *policy.Policy) func() error {
	if pol == nil || pol.Path == "" {
		return cfg.ReloadAllowed
	}
	return func() error {
		if cfg.ReloadAllowed != nil {
			if err := cfg.ReloadAllowed(); err != nil {
				return err
			}
		}
		s, err := cfg.loadSpec()
		if err != nil {
			return nil // the reload reports a spec that does not load
		}
		files, err := agent.AgentFiles(s, cfg.Load.DefaultAgentPath)
		if err != nil {
			return nil
		}
		return checkSpecs(pol, files, cfg)
	}
}
