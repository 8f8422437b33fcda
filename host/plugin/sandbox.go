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
func (cfg Config) command() (*exec.Cmd, error) {
	if cfg.Sandbox == nil {
		return proc.Command(cfg.Launcher, cfg.Path, cfg.Args...), nil
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
