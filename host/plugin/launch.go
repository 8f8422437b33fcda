// Package plugin runs plugin binaries for the host: it launches each one
// through go-plugin (gRPC only, mutual TLS with one-time ECDSA P-256
// certificates, a minimal environment, a process group of its own), asks it
// to Describe its tools, Loads the tools the agent wants (serving the host
// capabilities, host/capability, where the plugin reaches them), supervises
// the process (restarts, the grace period after a cancelled call) and calls
// its tools. It reaches a plugin only through pluginsdk/pluginrpc's
// Go-typed client, the wire's one speaker, and the rest of the host sees
// toolset tools and load statuses.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// DefaultStartTimeout bounds the handshake of a plugin that never completes it.
const DefaultStartTimeout = 10 * time.Second

// closeWait is how long Close lets a plugin stop gracefully before its
// process group is killed.
const closeWait = 5 * time.Second

// Config says how to launch one plugin binary.
type Config struct {
	// Name is the plugin's name in messages.
	Name string
	// Path is the binary's path; its sha256 is what SHA256 pins.
	Path string
	// Args are the arguments after the binary's path (a built-in plugin is
	// the host binary given a subcommand and the plugin's name).
	Args []string
	// SHA256 is an optional hex pin of the binary, checked before exec.
	SHA256 string
	// LockFile is the lock file SHA256 comes from; "" when it is the
	// agent file's own sha256. A mismatch names it.
	LockFile string
	// Env names extra host variables the plugin may inherit.
	Env []string
	// StartTimeout defaults to DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives the plugin's logs; nil discards them.
	Logger hclog.Logger
	// Getenv reads the host environment; nil means os.Getenv.
	Getenv func(string) string
	// CancelGrace is the grace period after a cancelled or timed-out call:
	// Launch passes it to the plugin (a tool still running past it takes
	// its plugin down; 0 is the SDK's default), and a loaded plugin's
	// supervisor kills a process that does not answer within it (0 is
	// supervise.DefaultGrace).
	CancelGrace time.Duration
	// Launcher, when set, is the command the binary is started through
	// (see proc.Command): kosong-host's plugin-exec, which starts it
	// without the capabilities that could read the host's memory.
	Launcher []string
	// Builtin says the plugin is the host binary itself (`plugin-serve
	// NAME`: Args are a subcommand and its operands; a sandbox's rules go
	// between them, `--sandbox RULES`, and the built-in applies them to
	// itself before it serves): its SDK is this one, which restores the garbage collector
	// the host turns off for the binary's package initialisation (see
	// pluginrpc.InitGCEnv). Package init of the host binary allocates
	// several MB, which would otherwise cost a few collections a start.
	Builtin bool
	// NoTLS turns mutual TLS off. Only benchmarks set it, to measure its cost.
	NoTLS bool
	// Sandbox, when set, confines the plugin: it is launched through
	// SandboxExec (`sandbox-exec --rules JSON -- PATH ARGS...`), which
	// applies the policy and then executes Path. SHA256 still pins Path.
	Sandbox     *sandbox.Policy
	SandboxExec string
	// Remote, when set, is a remote tool server to connect to instead of a
	// binary to launch (Path, Args, SHA256 and Env are then unused).
	Remote *Remote
}

// Process is a running plugin binary.
type Process struct {
	Name string
	Path string
	// Tools is what the binary's Describe answered.
	Tools []pluginrpc.ToolSpec
	// SharedLoads is the binary's Describe saying one process may serve
	// several sessions, each with its own Load (see Pool).
	SharedLoads bool

	// rpc is the plugin's wire client: calls, health, capability server.
	rpc    *pluginrpc.Client
	client processClient
	cmd    *exec.Cmd
	done   <-chan struct{}
	stderr *proc.Tail
	once   sync.Once
	// tag marks the plugin's process and everything it starts (proc.TagEnv).
	tag string
}

// Error is a launch failure, naming the plugin and its binary.
type Error struct {
	Plugin string
	Path   string
	Reason string
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("plugin %s: %s", e.Plugin, e.Reason) }
func (e *Error) Unwrap() error { return e.Err }

// ErrStartTimeout is the cause (errors.Is) of an *Error for a plugin that
// did not complete its handshake, or did not describe its tools, within the
// start timeout.
var ErrStartTimeout = errors.New("the plugin did not start within the start timeout")

// StartTimeouts are the plugins that did not start within the start timeout
// After (ErrStartTimeout), named in one line: on a busy machine every
// plugin of an agent may miss it.
type StartTimeouts struct {
	Plugins []string
	After   time.Duration
}

func (t StartTimeouts) String() string {
	if len(t.Plugins) == 1 {
		return fmt.Sprintf("plugin %s did not start within %s", t.Plugins[0], t.After)
	}
	return fmt.Sprintf("%d plugins did not start within %s (%s)", len(t.Plugins), t.After, strings.Join(t.Plugins, ", "))
}

// add records the timeout of plugin after.
func (t *StartTimeouts) add(plugin string, after time.Duration) {
	t.Plugins = append(t.Plugins, plugin)
	t.After = max(t.After, after)
}

// Launch starts the binary, completes the handshake and asks it to Describe
// its tools.
func Launch(ctx context.Context, cfg Config) (*Process, error) {
	if cfg.Remote != nil {
		return dialRemote(ctx, cfg)
	}
	fail := func(err error, format string, args ...any) error {
		return &Error{Plugin: cfg.Name, Path: cfg.Path, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if err := checkBinary(cfg.Path, cfg.SHA256, cfg.LockFile); err != nil {
		return nil, fail(err, "%v", err)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}

	cmd, err := cfg.command()
	if err != nil {
		return nil, fail(err, "%v", err)
	}
	cmd.Env = proc.Env(cfg.Getenv, cfg.Env...)
	if lvl := cfg.Logger.GetLevel(); lvl != hclog.NoLevel && lvl != hclog.Off {
		cmd.Env = append(cmd.Env, pluginrpc.LogLevelEnv+"="+lvl.String())
	}
	if cfg.Builtin {
		cmd.Env = append(cmd.Env, builtinGCEnv(cfg.Getenv)...)
	}
	if cfg.CancelGrace > 0 {
		cmd.Env = append(cmd.Env, pluginrpc.CancelGraceEnv+"="+cfg.CancelGrace.String())
	}
	tag := proc.NewTag()
	cmd.Env = append(cmd.Env, proc.TagVar(tag))
	cmd.Env = append(cmd.Env, telemetry.PluginEnv()...)
	proc.Isolate(cmd)

	// The start timeout counts the time the plugin makes no progress
	// (startWatch); go-plugin's own bound is the hard one.
	hardStart := cfg.StartTimeout
	if measurable() {
		hardStart *= startHardFactor
	}
	clientCfg := &goplugin.ClientConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{pluginrpc.ProtocolVersion: {pluginrpc.PluginName: &pluginrpc.Plugin{}}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		SkipHostEnv:      true,
		StartTimeout:     hardStart,
		Logger:           exitsAtDebug{cfg.Logger.Named(cfg.Name)},
		GRPCDialOptions:  pluginrpc.DialOptions(),
	}
	// The plugin's own stderr carries its hclog lines; what its tools print
	// after Serve comes over go-plugin's stdio stream. Keep the last lines of
	// both, to quote them when the plugin fails.
	st := proc.NewTail(20)
	clientCfg.Stderr, clientCfg.SyncStderr, clientCfg.SyncStdout = st, st, st

	var tlsFD *os.File
	if !cfg.NoTLS {
		tlsCfg, bundle, err := NewTLS(cfg.Name)
		if err != nil {
			return nil, fail(err, "%v", err)
		}
		r, err := bundlePipe(bundle)
		if err != nil {
			return nil, fail(err, "hand TLS material to the plugin: %v", err)
		}
		tlsFD = r
		cmd.ExtraFiles = []*os.File{r}
		cmd.Env = append(cmd.Env, pluginrpc.TLSFDEnv+"=3")
		clientCfg.TLSConfig = tlsCfg
	}

	client := goplugin.NewClient(clientCfg)
	p := &Process{Name: cfg.Name, Path: cfg.Path, client: client, cmd: cmd, stderr: st, tag: tag}
	var watch *startWatch
	if hardStart != cfg.StartTimeout {
		watch = watchStart(tag, cfg.StartTimeout, func() { proc.KillTagged(tag) })
	}
	rpc, err := client.Client()
	gaveUp := watch != nil && watch.end()
	if tlsFD != nil {
		_ = tlsFD.Close()
	}
	if err != nil {
		// go-plugin has already killed the process; what it started may
		// remain. (Its Kill would only warn that the plugin "failed to exit
		// gracefully".)
		if exitedBeforeHandshake(err) {
			// go-plugin says so once stdout ends; its stderr may not have
			// been read to the end yet, and the reason is there.
			waitExited(client)
		}
		exited := client.Exited()
		p.once.Do(func() {
			if cmd.Process != nil {
				proc.KillGroup(cmd.Process.Pid)
			}
			proc.KillTagged(tag)
		})
		reason := startFailure(cfg, err, st, exited)
		if gaveUp || isStartTimeout(err) {
			reason = fmt.Sprintf("%s did not complete the plugin handshake within %s", cfg.Path, cfg.StartTimeout)
			err = fmt.Errorf("%w: %w", ErrStartTimeout, err)
		}
		return nil, fail(err, "%s", reason)
	}
	if v := client.NegotiatedVersion(); v != pluginrpc.ProtocolVersion {
		p.Kill()
		return nil, fail(nil, "protocol version mismatch: the plugin speaks %d, the host %d", v, pluginrpc.ProtocolVersion)
	}
	raw, err := rpc.Dispense(pluginrpc.PluginName)
	if err != nil {
		p.Kill()
		return nil, fail(err, "dispense: %v", err)
	}
	rc, ok := raw.(*pluginrpc.Client)
	if !ok {
		p.Kill()
		return nil, fail(nil, "dispensed %T, not a kosong plugin", raw)
	}
	// go-plugin ends the client's Done once the process has exited.
	p.rpc, p.done = rc, rc.Done()
	// However the plugin ends (closed, killed, crashed), nothing it started
	// outlives it: not its tracked process groups, not what a command left
	// running in the background, wherever those were reparented.
	go func() { <-p.done; proc.KillTagged(tag) }()
	dctx, cancel := context.WithTimeout(ctx, hardStart)
	defer cancel()
	dwatch := watchStart(tag, cfg.StartTimeout, cancel)
	desc, err := rc.Describe(dctx)
	gaveUp = dwatch.end()
	if err != nil {
		p.Kill()
		if ctx.Err() == nil && (gaveUp || dctx.Err() != nil) {
			return nil, fail(fmt.Errorf("%w: %w", ErrStartTimeout, err), "%s did not describe its tools within %s", cfg.Path, cfg.StartTimeout)
		}
		return nil, fail(err, "describe: %v%s", err, st.Suffix())
	}
	p.Tools, p.SharedLoads = desc.Tools, desc.SharedLoads
	return p, nil
}

// exitsAtDebug is go-plugin's logger, with its line for a plugin process
// that exited with an error status at debug level: the host says itself,
// in one line with the plugin's reason, why a plugin failed to start or
// stopped.
type exitsAtDebug struct{ hclog.Logger }

func (l exitsAtDebug) Error(msg string, args ...any) {
	if msg == "plugin process exited" {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}

// exitedBeforeHandshake reports whether go-plugin's start error says the
// plugin exited without printing the handshake.
func exitedBeforeHandshake(err error) bool {
	lower := strings.ToLower(err.Error())
	return strings.Contains(lower, "exited before we could connect") ||
		strings.Contains(lower, "failed to read any lines from plugin's stdout")
}

// waitExited waits, at most exitWait, for go-plugin to record the exit of
// a plugin process that is ending, which it does once the process's stderr
// has been read to the end.
func waitExited(client *goplugin.Client) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for deadline := time.Now().Add(exitWait); !client.Exited() && time.Now().Before(deadline); {
		<-t.C
	}
}

// isStartTimeout reports whether go-plugin's start error says the
// handshake did not come within the start timeout.
func isStartTimeout(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "timeout while waiting for plugin to start")
}

// startFailure explains a failed handshake in one line. A program that
// exits before the handshake is a kosong plugin that failed when its
// stderr has the failure line of pluginrpc.FailureLine (pluginsdk.Serve
// writes it), whose reason is quoted; else it is not a kosong plugin.
func startFailure(cfg Config, err error, st *proc.Tail, exited bool) string {
	msg := strings.TrimSpace(err.Error())
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "incompatible api version"):
		return fmt.Sprintf("protocol version mismatch: %s", msg)
	case isStartTimeout(err):
		return fmt.Sprintf("%s did not complete the plugin handshake within %s", cfg.Path, cfg.StartTimeout)
	case exitedBeforeHandshake(err):
		if failure, ok := pluginrpc.FindFailure(st.String()); ok {
			return fmt.Sprintf("%s is a kosong plugin that %s", cfg.Path, failure)
		}
		return fmt.Sprintf("%s is not a kosong plugin: it exited before the plugin handshake%s", cfg.Path, st.Suffix())
	case strings.Contains(lower, "unrecognized remote plugin message"):
		first, _, _ := strings.Cut(strings.TrimPrefix(msg, "Unrecognized remote plugin message: "), "\n")
		return fmt.Sprintf("%s is not a kosong plugin: it printed %q instead of the plugin handshake", cfg.Path, first)
	case exited:
		return fmt.Sprintf("%s exited during the plugin handshake: %s%s", cfg.Path, firstLine(msg), st.Suffix())
	}
	return fmt.Sprintf("start %s: %s%s", cfg.Path, firstLine(msg), st.Suffix())
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// checkBinary refuses a missing or non-executable file, and a binary whose
// sha256 differs from its pin (from lockFile, or from the agent file when
// lockFile is ""), before anything is executed.
func checkBinary(path, pin, lockFile string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("binary not found: %s", path)
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a plugin binary", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	if pin == "" {
		return nil
	}
	got, err := pins.FileSHA256(path)
	if err != nil {
		return err
	}
	if !strings.EqualFold(got, pin) {
		if lockFile != "" {
			return fmt.Errorf("sha256 mismatch for %s: lock file %s pins %s, the file is %s; "+
				"if the change is intended, run `kosong-host plugins lock`", path, lockFile, pin, got)
		}
		return fmt.Errorf("sha256 mismatch for %s: agent spec pins %s, the file is %s; "+
			"if the change is intended, update the sha256 in the agent file", path, pin, got)
	}
	return nil
}

// bundlePipe writes the bundle into a pipe and returns its read end, to be
// inherited by the plugin as a file descriptor.
func bundlePipe(b pluginrpc.TLSBundle) (*os.File, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// The bundle (about 1.5 KB) fits in the pipe buffer, so this never blocks.
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// Call runs one tool call: on the plugin's Calls stream, or as a unary
// Call for a plugin without one. Its errors are gRPC status errors (see
// pluginrpc.Client).
func (p *Process) Call(ctx context.Context, req pluginrpc.CallRequest) (pluginrpc.Result, error) {
	return p.rpc.Call(ctx, req)
}

// Streaming reports whether the plugin's calls go over its Calls stream
// (false before the first call, and for a plugin built before the stream).
func (p *Process) Streaming() bool { return p.rpc.Streaming() }

// Done is closed once the plugin process has exited (and its stderr has
// been read).
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the plugin process has exited.
func (p *Process) Exited() bool { return p.client.Exited() }

// Pid is the plugin's process id (and that of its process group).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// pid is the plugin's process id, 0 for a remote tool server.
func (p *Process) pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Ping asks go-plugin's health service of the plugin whether it serves:
// an answer within ctx says the process is alive and answering.
func (p *Process) Ping(ctx context.Context) error { return p.rpc.Ping(ctx) }

// StderrTail returns the last lines the plugin wrote to stderr.
func (p *Process) StderrTail() string { return p.stderr.String() }

// LastWords sums up in one line why the plugin stopped, from its last
// stderr lines: a Go panic or fatal error line if there is one, else the
// last lines. It is "" when the plugin printed nothing.
func (p *Process) LastWords() string {
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return strings.TrimSpace(l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.TrimSpace(strings.Join(lines, " | "))
}

// Reason says why the plugin stopped: "it stopped", with its last words.
func (p *Process) Reason() string {
	if words := p.LastWords(); words != "" {
		return "it stopped: " + words
	}
	return "it stopped"
}

// Kill kills the plugin's process group at once, whatever the plugin is
// doing, then lets go-plugin clean up. It is safe to call more than once.
func (p *Process) Kill() {
	p.killGroup()
	p.stop()
}

// Close stops the plugin gracefully, as go-plugin does, and after at most
// closeWait kills every process left in its process group. It is safe to
// call more than once.
func (p *Process) Close() {
	stopped := make(chan struct{})
	go func() { p.stop(); close(stopped) }()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
	}
	// go-plugin's graceful stop waits for an exit a stopped process never
	// makes; the group's death ends the wait.
	p.killGroup()
	<-stopped
}

func (p *Process) stop() {
	p.once.Do(func() {
		if p.rpc != nil {
			p.rpc.Close()
		}
		p.client.Kill()
	})
}

func (p *Process) killGroup() {
	if p.cmd.Process != nil {
		proc.KillGroup(p.cmd.Process.Pid)
		_ = p.cmd.Process.Kill() // where there are no process groups
	}
	proc.KillTagged(p.tag)
}

// builtinGCEnv is a built-in plugin's garbage collector settings: off
// during package initialisation, then (pluginrpc.InitGCEnv) the GOGC the
// host was given, if a percentage, else 100; the host's GOMEMLIMIT, if
// set, holds for the plugin too.
func builtinGCEnv(getenv func(string) string) []string {
	pct := "100"
	if v := getenv("GOGC"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			pct = v
		}
	}
	env := []string{"GOGC=off", pluginrpc.InitGCEnv + "=" + pct}
	if v := getenv("GOMEMLIMIT"); v != "" {
		env = append(env, "GOMEMLIMIT="+v)
	}
	return env
}
