package pluginsdk

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// SandboxEnv is the variable a host's sandbox wrapper sets in a confined
// plugin's environment: the plugin's sandbox as a JSON object
// {"plugin", "read", "write", "network"}.
const SandboxEnv = "KOSONG_PLUGIN_SANDBOX"

// Sandbox is the Landlock sandbox the host confined this plugin process to.
type Sandbox struct {
	Plugin string   `json:"plugin"`
	Read   []string `json:"read"`
	Write  []string `json:"write"`
	// Network is "all", "none" or "ports 80, 443" once described; in the
	// environment it is an object, read by CurrentSandbox.
	Network string `json:"-"`
}

var currentSandbox = sync.OnceValue(func() *Sandbox { return parseSandbox(os.Getenv(SandboxEnv)) })

// CurrentSandbox is the sandbox this process runs in, nil when it runs
// unconfined.
func CurrentSandbox() *Sandbox { return currentSandbox() }

func parseSandbox(s string) *Sandbox {
	if s == "" {
		return nil
	}
	var raw struct {
		Plugin  string   `json:"plugin"`
		Read    []string `json:"read"`
		Write   []string `json:"write"`
		Network struct {
			All   bool  `json:"all"`
			Ports []int `json:"ports"`
		} `json:"network"`
	}
	if json.Unmarshal([]byte(s), &raw) != nil {
		return nil
	}
	sb := &Sandbox{Plugin: raw.Plugin, Read: raw.Read, Write: raw.Write, Network: "none"}
	switch {
	case raw.Network.All:
		sb.Network = "all"
	case len(raw.Network.Ports) > 0:
		ps := make([]string, len(raw.Network.Ports))
		for i, p := range raw.Network.Ports {
			ps[i] = strconv.Itoa(p)
		}
		sb.Network = "ports " + strings.Join(ps, ", ")
	}
	return sb
}

// Describe is "the sandbox of plugin NAME (writable: A, B; network: none)".
func (s Sandbox) Describe() string {
	w := "nothing"
	if len(s.Write) > 0 {
		w = strings.Join(s.Write, ", ")
	}
	net := s.Network
	if net == "" {
		net = "none"
	}
	return "the sandbox of plugin " + s.Plugin + " (writable: " + w + "; network: " + net + ")"
}

// Writable reports whether path lies beneath one of the sandbox's
// writable paths.
func (s Sandbox) Writable(path string) bool {
	path = filepath.Clean(path)
	for _, w := range s.Write {
		if w == "/" || path == w || strings.HasPrefix(path, strings.TrimSuffix(w, "/")+"/") {
			return true
		}
	}
	return false
}

// SandboxDenial explains a refused write: when this process is sandboxed,
// err is a permission error and path lies outside the writable paths, it is
// "`SHOWN` is outside the sandbox of plugin NAME (writable: ...)"; else "".
func SandboxDenial(path, shown string, err error) string {
	sb := CurrentSandbox()
	if sb == nil || !IsPermission(err) || sb.Writable(path) {
		return ""
	}
	return "`" + shown + "` is outside " + sb.Describe() + ": the write was refused."
}

// IsPermission reports whether err is EACCES or EPERM.
func IsPermission(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// SandboxNote explains permission errors in a command's output: when this
// process is sandboxed and text reports a refused operation, it says that
// the plugin's sandbox refuses writes outside its writable paths (and
// connections to other ports); else "".
func SandboxNote(text string) string {
	sb := CurrentSandbox()
	if sb == nil || !(strings.Contains(text, "Permission denied") || strings.Contains(text, "Operation not permitted")) {
		return ""
	}
	return "A permission was denied: commands run in " + sb.Describe() +
		", which refuses writes outside its writable paths and connections to ports it does not allow."
}
