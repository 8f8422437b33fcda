//go:build linux

package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestKillTagged: a process carrying the tag dies, wherever it is (here a
// grandchild in a process group of its own); an untagged one is left alone.
func TestKillTagged(t *testing.T) {
	tag := NewTag()
	tagged := exec.Command("sh", "-c", "setsid sleep 600 & wait")
	tagged.Env = append(os.Environ(), TagVar(tag))
	other := exec.Command("sleep", "600")
	other.Env = append(os.Environ(), TagVar(NewTag()))
	for _, c := range []*exec.Cmd{tagged, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	// Wait until the grandchild exists: sh plus sleep are two tagged pids.
	deadline := time.Now().Add(10 * time.Second)
	for len(taggedPids([]byte("\x00"+TagVar(tag)+"\x00"), os.Getpid())) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the tagged sleep did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := KillTagged(tag); n != 2 {
		t.Fatalf("killed %d, want 2 (sh and its sleep)", n)
	}
	tagged.Wait()
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Fatalf("the untagged sleep was killed: %v", err)
	}
	if n := KillTagged(""); n != 0 {
		t.Fatalf("an empty tag killed %d", n)
	}
}
