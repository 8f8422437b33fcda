package mcpclient

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

// Pin is the lock file's pin of a stdio server's command.
type Pin struct {
	SHA256 string
	// LockFile is the lock file that holds it, for messages.
	LockFile string
}

// CheckPin refuses a stdio server whose command is not the file pin pins:
// checked before each start of the server, restarts included.
func CheckPin(cfg spec.MCPServer, pin Pin) error {
	if !cfg.Stdio() || pin.SHA256 == "" {
		return nil
	}
	path := cfg.Command
	if filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			return fmt.Errorf("MCP server %s: %s: %v", cfg.Name, path, err)
		}
		path = lp
	}
	got, err := pins.FileSHA256(path)
	if err != nil {
		return fmt.Errorf("MCP server %s: %v", cfg.Name, err)
	}
	if got != pin.SHA256 {
		return fmt.Errorf("MCP server %s: sha256 mismatch for %s: lock file %s pins %s, the file is %s; "+
			"if the change is intended, run `kosong-host plugins lock`", cfg.Name, path, pin.LockFile, pin.SHA256, got)
	}
	return nil
}
