package plugin

import (
	"errors"

	"github.com/kosong-host/kosong-host/host/sandbox"
)

// command is what Launch executes: the plugin binary, or, for a sandboxed
// plugin, the sandbox wrapper that confines itself and then executes it.
func (cfg Config) command() (string, []string, error) {
	if cfg.Sandbox == nil {
		return cfg.Path, cfg.Args, nil
	}
	if cfg.SandboxExec == "" {
		return "", nil, errors.New("sandboxed, but the host has no sandbox-exec wrapper to launch it through")
	}
	name, args := sandbox.Command(cfg.SandboxExec, *cfg.Sandbox, cfg.Path, cfg.Args)
	return name, args, nil
}
