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

// TestTaggedCPU: a tagged process that spins is seen using the CPU; one
// that sleeps uses (next to) none; a command name with spaces and a ')'
// does not confuse the reading.
func TestTaggedCPU(t *testing.T) {
	start := func(script string) string {
		tag := NewTag()
		c := exec.Command("sh", "-c", script)
		c.Env = append(os.Environ(), TagVar(tag))
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { KillTagged(tag); c.Wait() })
		return tag
	}
	dir := t.TempDir()
	odd := dir + "/a b)c"
	if err := os.Symlink("/bin/sh", odd); err != nil {
		t.Fatal(err)
	}
	spin := start(`exec "` + odd + `" -c 'while :; do :; done'`)
	idle := start("exec sleep 600")
	deadline := time.Now().Add(60 * time.Second)
	for {
		cpu, ok := TaggedCPU(spin)
		if !ok {
			t.Fatal("TaggedCPU cannot measure on Linux")
		}
		if cpu >= 50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a spinning process used %v of CPU in a minute", cpu)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if cpu, _ := TaggedCPU(idle); cpu > 50*time.Millisecond {
		t.Errorf("a sleeping process used %v of CPU", cpu)
	}
	if cpu, ok := TaggedCPU(NewTag()); cpu != 0 || !ok {
		t.Errorf("no process: %v, %v", cpu, ok)
	}
}
