package proc

import (
	"os"
	"path/filepath"
	"sync"
)

// selfPath is where this process's executable was when it started ("" if
// unknown): a path the host resolves its own binary to (a built-in plugin,
// the launcher) is recognised by it.
var selfPath = func() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return filepath.Clean(p)
}()

// selfExec is what executes the running executable itself, not whatever
// file its path names now ("" where there is no such name).
var selfExec = sync.OnceValue(runningExecutable)

// Self is what to execute to run this very binary again: on Linux
// /proc/self/exe, which the kernel resolves in the process that calls
// execve to the file that process was started from (a forked child shares
// the host's), even if that path was since replaced, renamed or deleted;
// elsewhere, and without /proc, the executable's path.
func Self() (string, error) {
	if p := selfExec(); p != "" {
		return p, nil
	}
	if selfPath == "" {
		return os.Executable()
	}
	return selfPath, nil
}

// execPath is what to execute for path: Self when path is this binary's
// own path (a built-in plugin served by the host binary), path otherwise.
func execPath(path string) string {
	if selfPath != "" && filepath.IsAbs(path) && filepath.Clean(path) == selfPath {
		if p := selfExec(); p != "" {
			return p
		}
	}
	return path
}
