//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

var abiOnce = sync.OnceValue(func() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
})

// ABI is the kernel's Landlock ABI version, 0 when it has none.
func ABI() int { return abiOnce() }

// handledFS are the file system rights a policy governs: every right
// go-landlock knows, up to ABI 9's connecting to pathname unix sockets
// (granted in the write paths only, where go-plugin's sockets are). Rights
// the kernel lacks are dropped (best effort; Decide says what that costs).
const handledFS = landlock.AccessFSSet((1 << 17) - 1)

// scopes are the IPC scopes every policy closes (ABI 6): a confined
// process may neither signal a process outside its sandbox nor connect to
// an abstract unix socket created outside it.
const scopes = landlock.ScopedSet(ll.ScopeAbstractUnixSocket | ll.ScopeSignal)

// socketFilter installs the socket filter (a variable for tests): on the
// calling thread, or on every thread of the process.
var socketFilter = applySocketFilter

// Exec applies p to the calling process and executes argv[0] with argv and
// env, EnvVar added; it returns only on failure.
func Exec(p Policy, argv []string, env []string) error {
	// The rules bind this thread only; it is never unlocked, and it is the
	// thread that executes the plugin.
	runtime.LockOSThread()
	applied, err := confine(p, argv[0], false)
	if err != nil {
		return err
	}
	if applied {
		env = append(env, EnvVar+"="+p.Marshal())
	}
	if err := syscall.Exec(argv[0], argv, env); err != nil {
		return fmt.Errorf("sandbox of plugin %s: exec %s: %v", p.Plugin, argv[0], err)
	}
	return nil
}

// Restrict applies p to every thread of the calling process, which goes
// on running confined, and sets EnvVar: a built-in plugin (the host's own
// binary, trusted as the host is) confines itself so before it serves,
// with no wrapper process to execute first. Every program it starts
// inherits the rules.
func Restrict(p Policy) error {
	applied, err := confine(p, "", true)
	if err != nil || !applied {
		return err
	}
	return os.Setenv(EnvVar, p.Marshal())
}

// confine applies p (and read access to the file exe, when set) to the
// calling thread, or to every thread: no_new_privs, the socket filter
// when the network is restricted, then the Landlock rules. It reports
// whether the kernel has Landlock: without it, a policy not Required is
// not applied.
func confine(p Policy, exe string, allThreads bool) (bool, error) {
	cfg := landlock.Config{HandledAccessFS: handledFS, Scoped: scopes}
	readDirs, readFiles := split(p.Read)
	writeDirs, writeFiles := split(p.Write)
	if exe != "" {
		// The plugin's own binary, whatever read allows.
		readFiles = append(readFiles, exe)
	}
	rules := []landlock.Rule{
		landlock.RODirs(readDirs...),
		landlock.ROFiles(readFiles...),
		landlock.RWDirs(writeDirs...).WithRefer().WithResolveUnix(),
		landlock.RWFiles(writeFiles...),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs(deviceDirs...).WithIoctlDev().IgnoreIfMissing(),
	}
	if !p.Network.All {
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		if len(p.Network.Ports) == 0 {
			// ABI 10 governs UDP too: none at all (the socket filter
			// refuses UDP sockets on older kernels).
			cfg.HandledAccessNet |= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
		}
		for _, port := range p.Network.Ports {
			rules = append(rules, landlock.ConnectTCP(port), landlock.BindTCP(port))
		}
	}
	cfg = cfg.BestEffort().EnableLoggingForSubprocesses()
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return false, fmt.Errorf("sandbox of plugin %s: %v", p.Plugin, err)
	}
	if fd < 0 {
		if p.Required {
			return false, fmt.Errorf("sandbox of plugin %s: this kernel has no Landlock", p.Plugin)
		}
		return false, nil
	}
	defer unix.Close(fd)
	prctl, restrict := unix.Prctl, ll.LandlockRestrictSelf
	if allThreads {
		prctl, restrict = ll.AllThreadsPrctl, ll.AllThreadsLandlockRestrictSelf
	}
	if err := prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return false, fmt.Errorf("sandbox of plugin %s: no_new_privs: %v", p.Plugin, err)
	}
	if !p.Network.All {
		if err := socketFilter(len(p.Network.Ports) > 0, allThreads); err != nil {
			if p.Required {
				return false, fmt.Errorf("sandbox of plugin %s: cannot refuse UDP and raw sockets: %v", p.Plugin, err)
			}
			fmt.Fprintf(os.Stderr, "kosong-host: sandbox of plugin %s: UDP and raw sockets are not refused: %v\n", p.Plugin, err)
		}
	}
	if err := restrict(fd, flags); err != nil {
		return false, fmt.Errorf("sandbox of plugin %s: restrict: %v", p.Plugin, err)
	}
	return true, nil
}

// split sorts paths into folders and other files (Landlock grants folder
// rights on folders only).
func split(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return dirs, files
}
