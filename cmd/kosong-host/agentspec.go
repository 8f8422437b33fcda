package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/agents"
	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/trust"
)

// noAgentAnnotation marks commands that use no agent spec (init, sessions,
// version...): --agent is not looked up for them.
const noAgentAnnotation = "kosong-host/no-agent"

// findAgent picks the agent spec for the command: --agent, else the first
// of ./.kosong/agent.yaml, ./agent.yaml, the .kosong/agent.yaml of a folder
// above up to the repository root (under that folder's trust:
// gateAncestor), $XDG_CONFIG_HOME/kosong-host/agent.yaml, else the
// built-in default. It
// sets g.agentPath (what the commands load) and g.agentSource (what the
// banner and `tools list` show). The folder's own agent file and .env are
// used only in a trusted folder (gateWorkspace).
func (g *globals) findAgent(cmd *cobra.Command, args []string) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[noAgentAnnotation] != "" {
			return nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	explicit := ""
	if f := cmd.Flags().Lookup("agent"); f != nil && f.Changed {
		explicit = g.agentPath
	}
	builtin, berr := builtinAgentPath()
	src, err := agent.Find(explicit, wd, builtin, os.Getenv)
	if err != nil {
		return exitCode(2, errors.Join(err, berr))
	}
	g.agentPath, g.agentSource = src.Path, src
	root := ""
	if !src.Explicit && (src.Builtin || filepath.IsAbs(src.Path)) {
		// No project agent in the work dir: a sub-folder of a project
		// uses the project's.
		if dir, file := ancestorAgent(wd); file != "" {
			ok, err := g.gateAncestor(cmd, args, dir, file)
			if err != nil {
				return err
			}
			if ok {
				g.agentPath, g.agentSource, root = file, agent.Source{Path: file}, dir
				if folder, err := trust.Folder(dir); err == nil {
					root = folder // as the trust store keys it
				}
			}
		}
	}
	if err := g.gateWorkspace(cmd, args, wd); err != nil {
		return err
	}
	if root != "" && !g.trust {
		// /reload checks the project folder's files again.
		g.trustedProject, g.agentFolder = true, root
	}
	return nil
}

// ancestorAgent finds the project agent of a sub-folder: the nearest
// .kosong/agent.yaml in a folder above wd, up to the repository root (the
// folder holding .git); none outside a repository.
func ancestorAgent(wd string) (dir, file string) {
	root := ""
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
	for d := filepath.Dir(wd); len(d) >= len(root) && d != wd; d = filepath.Dir(d) {
		if f := filepath.Join(d, ".kosong", "agent.yaml"); isFileAt(f) {
			return d, f
		}
		if d == root {
			break
		}
	}
	return "", ""
}

var builtinAgents struct {
	once sync.Once
	path string
	err  error
}

// builtinAgentPath is the spec of the built-in default agent, unpacked from
// the binary (agents.FS) into the user's cache folder on first use.
func builtinAgentPath() (string, error) {
	builtinAgents.once.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir, err := spec.Unpack(agents.FS, filepath.Join(cache, "kosong-host"))
		if err != nil {
			// The cache folder may be read-only: try the temp folder.
			dir, err = spec.Unpack(agents.FS, filepath.Join(os.TempDir(), fmt.Sprintf("kosong-host-%d", os.Getuid())))
		}
		if err != nil {
			builtinAgents.err = fmt.Errorf("the built-in default agent could not be unpacked: %w", err)
			return
		}
		builtinAgents.path = spec.DefaultAgentFile(dir)
	})
	return builtinAgents.path, builtinAgents.err
}

// inBuiltinAgents says whether path is a file of the unpacked tree of
// built-in agents, which is part of kosong-host and never pinned.
func inBuiltinAgents(path string) bool {
	p, err := builtinAgentPath()
	if err != nil {
		return false
	}
	tree := filepath.Dir(filepath.Dir(p))
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(tree, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// loadAgentSpec loads the agent spec at path, `extend: default` naming
// defaultAgentPath.
func loadAgentSpec(path string) (*spec.Spec, error) {
	return spec.Load(path, spec.LoadOptions{DefaultAgentPath: defaultAgentPath()})
}

// defaultAgentPath is the agent that `extend: default` names:
// $KOSONG_DEFAULT_AGENT if set, else the built-in default agent.
func defaultAgentPath() string {
	if p := os.Getenv("KOSONG_DEFAULT_AGENT"); p != "" {
		return p
	}
	p, _ := builtinAgentPath()
	return p
}

// printAgentSource adds the spec in use to a run's start output (on stderr,
// and not with stream-json, whose stdout carries the session event).
func printAgentSource(w io.Writer, streamJSON bool, a *agent.Agent) {
	if streamJSON {
		return
	}
	fmt.Fprintf(w, "agent %s from %s\n", a.Spec.Name, a.Source)
}
