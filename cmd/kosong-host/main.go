// Command kosong-host runs LLM agents whose tools live in separate plugin
// binaries.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/sandbox"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == execCmd {
		os.Exit(execChild(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == pluginServeCmd && os.Args[2] == sandbox.LauncherFlag {
		os.Exit(serveConfined(os.Args[3:]))
	}
	if len(os.Args) < 2 || os.Args[1] != pluginServeCmd {
		// The host holds the provider keys: no process without
		// CAP_SYS_PTRACE may read its memory or environment, and nothing
		// it executes has CAP_SYS_PTRACE or the other capabilities that
		// read it (proc.DroppedCaps), whatever file it executes. (Without
		// CAP_SETPCAP a root host keeps them in its bounding set, and
		// execCmd refuses to start children.)
		_ = proc.MarkUndumpable()
		_ = proc.LimitChildren()
		hangUpAsTerminate()
	}
	os.Exit(run(os.Args[1:]))
}

// execCmd is the hidden first argument of the process a plugin or a stdio
// MCP server is started through: `kosong-host plugin-exec PATH ARGS...`
// drops the capabilities that read other processes (proc.DroppedCaps) and
// execs PATH in its place, same pid.
const execCmd = "plugin-exec"

// launcher is what plugins and stdio MCP servers are started through, on
// Linux: this binary's execCmd. (A child exec'd directly from the host
// would inherit the host's capabilities; Go cannot drop them between fork
// and exec.) It is the running binary (proc.Self), not the file at its
// path, which a command may have replaced.
func launcher() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	exe, err := proc.Self()
	if err != nil {
		return nil
	}
	return []string{exe, execCmd}
}

func execChild(argv []string) int {
	var err error
	if len(argv) >= 2 && argv[0] == sandbox.LauncherFlag {
		// A sandboxed plugin: capabilities dropped, then the Landlock
		// rules applied, then the plugin executed, in this one process.
		p, perr := sandbox.Unmarshal(argv[1])
		if perr != nil {
			fmt.Fprintf(os.Stderr, "kosong-host %s: %v\n", execCmd, perr)
			return 2
		}
		if err = proc.DropCaps(); err == nil {
			err = sandbox.Exec(p, argv[2:], os.Environ())
		}
	} else {
		err = proc.ExecUnprivileged(argv, os.Environ())
	}
	fmt.Fprintf(os.Stderr, "kosong-host %s: %v\n", execCmd, err)
	return 126
}

// serveConfined serves a sandboxed built-in plugin, `plugin-serve
// --sandbox RULES NAME`: it applies the rules to the whole process first,
// before any of the plugin's code runs, and then serves as plugin-serve
// NAME does. The host starts a built-in so when it needs no launcher to
// drop capabilities (proc.DirectStart): one exec, not two.
func serveConfined(argv []string) int {
	if len(argv) < 1 {
		fmt.Fprintf(os.Stderr, "kosong-host %s: %s needs the sandbox rules\n", pluginServeCmd, sandbox.LauncherFlag)
		return 2
	}
	p, err := sandbox.Unmarshal(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "kosong-host %s: %v\n", pluginServeCmd, err)
		return 2
	}
	if err := sandbox.Restrict(p); err != nil {
		fmt.Fprintf(os.Stderr, "kosong-host %s: %v\n", pluginServeCmd, err)
		return 126
	}
	return run(append([]string{pluginServeCmd}, argv[1:]...))
}

// run executes the command line and returns the exit code: 0 ok, 1 a tool or
// turn failed, 2 usage, spec or load error, 75 provider failure after retries.
func run(args []string) int {
	stop, err := startTelemetry(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: "+err.Error())
		return 2
	}
	defer stop()
	root := newRootCmd()
	root.SetArgs(args)
	err = root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "error: "+ee.err.Error()+startTimeoutHint(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "error: "+err.Error()+startTimeoutHint(err))
	return 2
}

// startTimeoutHint ends the error of an agent whose plugins did not start
// in time with the flag that gives them longer.
func startTimeoutHint(err error) string {
	var le *agent.LoadError
	if errors.As(err, &le) && len(le.TimedOut.Plugins) > 0 {
		return "; a busy machine starts plugins slowly: give them longer with --plugin-start-timeout"
	}
	return ""
}

// exitError carries an exit code; err, if set, is printed as "error: ...".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode wraps err with an exit code.
func exitCode(code int, err error) error { return &exitError{code: code, err: err} }
