// Package sandbox confines a plugin or stdio MCP server process with Linux
// Landlock: the host turns an agent.yaml `sandbox:` block into a Policy,
// launches the process through its own binary (`kosong-host plugin-exec
// --sandbox JSON PATH ARGS...`, or `kosong-host sandbox-exec --rules JSON
// -- PATH ARGS...`), and the wrapper applies the policy to itself with Exec
// before it executes the program. The rules then hold for the program and
// for every process it starts; it cannot lift them.
//
// A policy governs file access (read and write paths), TCP connect and bind
// (network rules, ABI 4), connecting to pathname unix sockets outside the
// write paths (ABI 9), signals to and abstract unix sockets of processes
// outside the sandbox (IPC scopes, ABI 6), and UDP (ABI 10, network none).
// When the network is restricted a seccomp filter also refuses the sockets
// Landlock cannot govern (UDP under none, Multipath TCP, raw, packet,
// SCTP...) and io_uring; see netfilter_linux.go.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// ExecCommand is the hidden subcommand of the host binary that applies a
// policy and executes the plugin.
const ExecCommand = "sandbox-exec"

// LauncherFlag, with the Policy as JSON after it, asks the host's launcher
// (`kosong-host plugin-exec`, which drops capabilities before it executes a
// plugin or a stdio MCP server) to apply the Policy too, so that a
// sandboxed process costs one wrapper, not two.
const LauncherFlag = "--sandbox"

// EnvVar is the variable the wrapper sets in a confined plugin's
// environment: the Policy as JSON, so the plugin can name its sandbox in
// its errors (pluginsdk.CurrentSandbox reads it).
const EnvVar = pluginsdk.SandboxEnv

// NetworkABI is the first Landlock ABI with TCP bind and connect rules.
const NetworkABI = 4

// ScopeABI is the first Landlock ABI with IPC scopes: a confined process
// cannot signal processes outside its sandbox nor connect to abstract unix
// sockets created outside it.
const ScopeABI = 6

// Policy is what one plugin process may do.
type Policy struct {
	// Plugin names the plugin, for messages.
	Plugin string `json:"plugin"`
	// Read are the paths (and everything beneath them) the plugin may read
	// and execute.
	Read []string `json:"read"`
	// Write are the paths the plugin may also create, change and remove
	// files in.
	Write []string `json:"write"`
	// Network says which TCP ports the plugin may connect to and bind;
	// restricted, it also refuses other internet sockets (UDP too under
	// none).
	Network Network `json:"network"`
	// Required refuses to run the plugin unconfined when the kernel cannot
	// apply the policy.
	Required bool `json:"required,omitempty"`
}

// Network is the TCP part of a policy: every port (All), or only Ports
// (none when empty).
type Network struct {
	All   bool     `json:"all,omitempty"`
	Ports []uint16 `json:"ports,omitempty"`
}

// String is "all", "none" or "ports 80, 443".
func (n Network) String() string {
	switch {
	case n.All:
		return "all"
	case len(n.Ports) == 0:
		return "none"
	}
	ps := make([]string, len(n.Ports))
	for i, p := range n.Ports {
		ps[i] = strconv.Itoa(int(p))
	}
	return "ports " + strings.Join(ps, ", ")
}

// Describe is "the sandbox of plugin NAME (writable: A, B; network: none)".
func (p Policy) Describe() string {
	return pluginsdk.Sandbox{Plugin: p.Plugin, Read: p.Read, Write: p.Write, Network: p.Network.String()}.Describe()
}

// Marshal is the policy as the wrapper's --rules argument.
func (p Policy) Marshal() string {
	b, _ := json.Marshal(p) // a struct of strings and numbers always marshals
	return string(b)
}

// Unmarshal reads a --rules argument.
func Unmarshal(s string) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("sandbox rules: %v", err)
	}
	if p.Plugin == "" {
		return p, errors.New("sandbox rules: no plugin name")
	}
	for _, path := range slices.Concat(p.Read, p.Write) {
		if !strings.HasPrefix(path, "/") {
			return p, fmt.Errorf("sandbox rules: %q is not an absolute path", path)
		}
	}
	return p, nil
}

// Command is the wrapper's command line: exe sandbox-exec --rules JSON --
// path args...
func Command(exe string, p Policy, path string, args []string) (string, []string) {
	return exe, append([]string{ExecCommand, "--rules", p.Marshal(), "--", path}, args...)
}

// Decision is what the host does with a policy on this kernel.
type Decision struct {
	// Confine is true when the plugin is to be launched through the wrapper.
	Confine bool
	// Warning, when set, says what of the policy this kernel cannot apply
	// (the plugin then runs with less confinement, or none).
	Warning string
}

// Decide checks a policy against the kernel's Landlock ABI (0 = none): a
// required policy the kernel cannot apply in full is an error; another
// one runs with what the kernel can apply, and a warning.
func Decide(p Policy, abi int) (Decision, error) {
	var lacks, costs []string
	switch {
	case abi <= 0:
		lacks, costs = []string{"this kernel has no Landlock"}, []string{"plugins run unconfined"}
	default:
		if !p.Network.All && abi < NetworkABI {
			lacks = append(lacks, fmt.Sprintf("this kernel's Landlock (ABI %d) has no network rules (ABI %d+)", abi, NetworkABI))
			costs = append(costs, "plugins' network is unconfined")
		}
		if abi < ScopeABI {
			lacks = append(lacks, fmt.Sprintf("this kernel's Landlock (ABI %d) has no IPC scopes (ABI %d+)", abi, ScopeABI))
			costs = append(costs, "plugins may signal processes and reach abstract unix sockets outside their sandbox")
		}
	}
	if len(lacks) == 0 {
		return Decision{Confine: true}, nil
	}
	lack := strings.Join(lacks, " and ")
	if p.Required {
		less := "less confined"
		if abi <= 0 {
			less = "unconfined"
		}
		return Decision{}, fmt.Errorf("sandbox required but %s: refusing to run it %s (set required: false to run it anyway)", lack, less)
	}
	return Decision{Confine: abi > 0, Warning: lack + ": " + strings.Join(costs, "; ")}, nil
}

var (
	warnMu sync.Mutex
	warned = map[string]bool{}
)

// WarnOnce reports whether msg is new to this process (to log it once,
// however many plugins it concerns).
func WarnOnce(msg string) bool {
	warnMu.Lock()
	defer warnMu.Unlock()
	if warned[msg] {
		return false
	}
	warned[msg] = true
	return true
}

// devices are the device files every confined plugin may open for writing
// (and use ioctls on): what shells and terminals need.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/random", "/dev/urandom"}

// deviceDirs are device folders every confined plugin may write in: pseudo
// terminals and POSIX shared memory.
var deviceDirs = []string{"/dev/pts", "/dev/shm"}
