package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/spec"
)

// landlockABI is the kernel's Landlock ABI (a variable for tests).
var landlockABI = sandbox.ABI

// sandboxDefaultWrite is the write list of a sandbox that sets none.
var sandboxDefaultWrite = []string{"$WORK_DIR", "$STATE_DIR", "$TMPDIR"}

// sandboxes builds the policy of every sandboxed plugin, by plugin name:
// paths resolved and checked, the plugin's state dir created, the policy
// checked against the kernel. A plugin the kernel cannot confine, when its
// sandbox is not required, is left out with a warning (once per process).
func sandboxes(refs []spec.PluginRef, opts Options) (map[string]*sandbox.Policy, error) {
	out := map[string]*sandbox.Policy{}
	for _, ref := range refs {
		if ref.Sandbox == nil || ref.Remote != nil {
			continue // a remote tool server is confined where it runs
		}
		p, err := decide(ref, opts, opts.SandboxExec != "")
		if err != nil {
			return nil, err
		}
		if p != nil {
			out[ref.Name] = p
		}
	}
	return out, nil
}

// mcpSandboxes builds the policy of every sandboxed stdio MCP server, by
// server name, as sandboxes does for plugins: a server's own `sandbox`,
// else the agent's. The policy names the server "mcp:NAME"; its $STATE_DIR
// is the session's mcp/NAME. Servers are confined through the launcher
// (`plugin-exec --sandbox`): without one they cannot be.
func mcpSandboxes(servers []spec.MCPServer, agentSandbox *spec.Sandbox, opts Options) (map[string]*sandbox.Policy, error) {
	out := map[string]*sandbox.Policy{}
	for _, srv := range servers {
		sb := srv.Sandbox
		if sb == nil {
			sb = agentSandbox
		}
		if sb == nil || !srv.Stdio() || srv.Disabled {
			continue
		}
		ref := spec.PluginRef{Name: "mcp:" + srv.Name, Sandbox: sb}
		p, err := decide(ref, opts, len(opts.Launcher) > 0)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out[srv.Name] = p
		}
	}
	return out, nil
}

// decide builds ref's policy and checks it against the kernel (none when
// the host has no wrapper to confine it through): nil when it runs
// unconfined, with a warning.
func decide(ref spec.PluginRef, opts Options, wrapper bool) (*sandbox.Policy, error) {
	p, err := policy(ref, opts)
	if err != nil {
		return nil, err
	}
	abi := landlockABI()
	if !wrapper {
		abi = 0
	}
	d, err := sandbox.Decide(*p, abi)
	if err != nil {
		return nil, sandboxError(ref, err.Error())
	}
	if d.Warning != "" && sandbox.WarnOnce(d.Warning) {
		opts.Logger.Warn("sandbox: " + d.Warning)
	}
	if !d.Confine {
		return nil, nil
	}
	return p, nil
}

// sandboxError is a spec error at the sandbox block of ref, naming the
// reference that declared it (or the agent's block, and the plugin).
func sandboxError(ref spec.PluginRef, msg string) error {
	sb := ref.Sandbox
	where := fmt.Sprintf("agent sandbox (for plugin %s)", ref.Name)
	if server, ok := strings.CutPrefix(ref.Name, "mcp:"); ok {
		where = fmt.Sprintf("sandbox (for mcp server %s)", server)
	}
	for _, r := range ref.Refs {
		if r.Sandbox == sb {
			where = fmt.Sprintf("sandbox of tools entry %q", r.Text)
			break
		}
	}
	return &spec.Error{File: sb.File, Line: sb.Line, Msg: where + ": " + msg}
}

func policy(ref spec.PluginRef, opts Options) (*sandbox.Policy, error) {
	sb := ref.Sandbox
	p := &sandbox.Policy{Plugin: ref.Name, Required: sb.Required, Network: sandbox.Network{All: sb.NetworkAll, Ports: sb.Ports}}
	read, write := sb.Read, sb.Write
	if read == nil {
		read = []string{"/"}
	}
	if write == nil {
		write = sandboxDefaultWrite
	}
	// go-plugin puts the plugin's socket in the temp dir: always writable.
	write = append(slices.Clone(write), "$TMPDIR")
	var err error
	if p.Read, err = resolvePaths(ref, opts, "read", read); err != nil {
		return nil, err
	}
	if p.Write, err = resolvePaths(ref, opts, "write", write); err != nil {
		return nil, err
	}
	return p, nil
}

func resolvePaths(ref spec.PluginRef, opts Options, what string, paths []string) ([]string, error) {
	out := []string{}
	for _, written := range paths {
		path, ok, err := expand(ref, opts, written)
		if err != nil {
			return nil, sandboxError(ref, fmt.Sprintf("%s path %s: %v", what, written, err))
		}
		if !ok {
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			shown := written
			if shown != path {
				shown += " (" + path + ")"
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil, sandboxError(ref, fmt.Sprintf("%s path %s does not exist", what, shown))
			}
			return nil, sandboxError(ref, fmt.Sprintf("%s path %s: %v", what, shown, err))
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// expand resolves the variable a sandbox path starts with; ok is false for
// $STATE_DIR when the session has no state dir.
func expand(ref spec.PluginRef, opts Options, s string) (path string, ok bool, err error) {
	v, rest, _ := strings.Cut(s, "/")
	var base string
	switch v {
	case "$WORK_DIR":
		base = opts.WorkDir
		if base == "" {
			if base, err = os.Getwd(); err != nil {
				return "", false, err
			}
		}
	case "$STATE_DIR":
		if opts.StateDir == "" {
			return "", false, nil
		}
		// The directory plugin.Load hands the plugin; the rule needs it now.
		base = filepath.Join(opts.StateDir, "plugins", ref.Name)
		if server, ok := strings.CutPrefix(ref.Name, "mcp:"); ok {
			base = filepath.Join(opts.StateDir, "mcp", server)
		}
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", false, err
		}
	case "$TMPDIR":
		if base = opts.Getenv("TMPDIR"); base == "" {
			base = "/tmp"
		}
	case "$HOME", "~":
		if base = opts.Getenv("HOME"); base == "" {
			return "", false, errors.New("HOME is not set")
		}
	default:
		return s, true, nil // absolute already (spec resolved it)
	}
	return filepath.Join(base, rest), true, nil
}
