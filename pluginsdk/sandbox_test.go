package pluginsdk

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestParseSandbox(t *testing.T) {
	for in, want := range map[string]*Sandbox{
		"":         nil,
		"not json": nil,
		`{"plugin":"file","read":["/"],"write":["/w"],"network":{}}`:    {Plugin: "file", Read: []string{"/"}, Write: []string{"/w"}, Network: "none"},
		`{"plugin":"shell","write":["/w","/t"],"network":{"all":true}}`: {Plugin: "shell", Write: []string{"/w", "/t"}, Network: "all"},
		`{"plugin":"web","write":[],"network":{"ports":[80,443]}}`:      {Plugin: "web", Write: []string{}, Network: "ports 80, 443"},
	} {
		got := parseSandbox(in)
		if (got == nil) != (want == nil) || (got != nil && got.Describe() != want.Describe()) {
			t.Errorf("parseSandbox(%q) = %+v, want %+v", in, got, want)
		}
	}
	if d := (Sandbox{Plugin: "x"}).Describe(); d != "the sandbox of plugin x (writable: nothing; network: none)" {
		t.Errorf("Describe = %q", d)
	}
}

func TestWritable(t *testing.T) {
	sb := Sandbox{Write: []string{"/work", "/tmp/"}}
	for path, want := range map[string]bool{"/work": true, "/work/a/b": true, "/workshop/x": false, "/tmp/x": true, "/etc/x": false, "/work/../etc": false} {
		if got := sb.Writable(path); got != want {
			t.Errorf("Writable(%s) = %v", path, got)
		}
	}
	if !(Sandbox{Write: []string{"/"}}).Writable("/any") {
		t.Error("/ does not cover everything")
	}
}

func TestSandboxDenial(t *testing.T) {
	t.Setenv(SandboxEnv, `{"plugin":"file","read":["/"],"write":["/work"],"network":{}}`)
	sb := parseSandbox(os.Getenv(SandboxEnv))
	saved := currentSandbox
	currentSandbox = func() *Sandbox { return sb }
	t.Cleanup(func() { currentSandbox = saved })
	perm := &fs.PathError{Op: "open", Path: "/etc/x", Err: syscall.EACCES}
	if got := SandboxDenial("/etc/x", "x", perm); got != "`x` is outside the sandbox of plugin file (writable: /work; network: none): the write was refused." {
		t.Errorf("denial = %q", got)
	}
	for _, tc := range []struct {
		path string
		err  error
	}{{"/work/x", perm}, {"/etc/x", errors.New("disk full")}, {"/etc/x", syscall.ENOSPC}} {
		if got := SandboxDenial(tc.path, "x", tc.err); got != "" {
			t.Errorf("SandboxDenial(%s, %v) = %q, want none", tc.path, tc.err, got)
		}
	}
	if !IsPermission(syscall.EPERM) || IsPermission(syscall.ENOENT) {
		t.Error("IsPermission")
	}
	if n := SandboxNote("sh: /etc/x: Permission denied"); !strings.Contains(n, "the sandbox of plugin file") {
		t.Errorf("note = %q", n)
	}
	if n := SandboxNote("all fine"); n != "" {
		t.Errorf("note on success = %q", n)
	}
	currentSandbox = func() *Sandbox { return nil }
	if SandboxDenial("/etc/x", "x", perm) != "" || SandboxNote("Permission denied") != "" {
		t.Error("an unconfined plugin blames a sandbox")
	}
}
