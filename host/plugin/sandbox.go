package plugin

import (
	"errors"
	"os/exec"
	"slices"

	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/sandbox"
)

// command is what Launch executes: the plugin binary, or, for a sandboxed
// plugin, the sandbox wrapper that confines itself and then executes it.
// The launcher, which drops capabilities, is left out when the host has
// already taken them out of every child (proc.DirectStart): the plugin is
// then one exec, not two. So is a sandboxed built-in, which applies its
// rules to itself (`plugin-serve --sandbox RULES NAME`, see Builtin).
func (cfg Config) command() (*exec.Cmd, error) {
	direct := len(cfg.Launcher) > 0 && directStart()
	if cfg.Sandbox == nil {
		if direct {
			return proc.Command(nil, cfg.Path, cfg.Args...), nil
		}
		return proc.Command(cfg.Launcher, cfg.Path, cfg.Args...), nil
	}
	if direct && cfg.Builtin && len(cfg.Args) > 0 {
		args := slices.Concat(cfg.Args[:1], []string{sandbox.LauncherFlag, cfg.Sandbox.Marshal()}, cfg.Args[1:])
		return proc.Command(nil, cfg.Path, args...), nil
	}
	if len(cfg.Launcher) > 0 {
		// One wrapper does both: it drops the capabilities, applies the
		// Landlock rules and executes the plugin.
		launcher := append(slices.Clone(cfg.Launcher), sandbox.LauncherFlag, cfg.Sandbox.Marshal())
		return proc.Command(launcher, cfg.Path, cfg.Args...), nil
	}
	if cfg.SandboxExec == "" {
		return nil, errors.New("sandboxed, but the host has no sandbox-exec wrapper to launch it through")
	}
	name, args := sandbox.Command(cfg.SandboxExec, *cfg.Sandbox, cfg.Path, cfg.Args)
	return exec.Command(name, args...), nil
}

// directStart is proc.DirectStart (a variable for tests).
var directStart = proc.DirectStart
