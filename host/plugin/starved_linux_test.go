package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/plugin"
)

// TestStartWhileStarved: a plugin that gets the CPU a tenth of the time
// (stopped 360 ms, run 40 ms, over and over) starts, slowly, within a
// start timeout far shorter than the start takes: the timeout counts the
// time the plugin makes no progress, not the time that passes.
func TestStartWhileStarved(t *testing.T) {
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	// The plugin runs from a path of its own, so the test finds its
	// process (and only it) by its executable.
	bin := filepath.Join(t.TempDir(), "starved-echo")
	data, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	stop := make(chan struct{})
	starved := make(chan int, 1)
	go func() { starved <- starve(bin, stop) }()
	start := time.Now()
	p, err := plugin.Launch(context.Background(), plugin.Config{Name: "starved", Path: bin, StartTimeout: timeout, Getenv: testEnv})
	took := time.Since(start)
	close(stop)
	cycles := <-starved
	if err != nil {
		t.Fatalf("a starved plugin did not start (after %v, %d stop cycles): %v", took, cycles, err)
	}
	p.Kill()
	if cycles < 3 {
		// The start was too fast to be starved: the test proved nothing.
		t.Skipf("the plugin started in %v, through only %d stop cycles", took, cycles)
	}
	t.Logf("started in %v through %d stop cycles, with a start timeout of %v", took, cycles, timeout)
}

// starve stops and continues every process running bin until stop is
// closed, and returns how many times it stopped one.
func starve(bin string, stop <-chan struct{}) int {
	cycles := 0
	for {
		pids := pidsOf(bin)
		if len(pids) == 0 { // not started yet, or exec'ing
			select {
			case <-stop:
				return cycles
			case <-time.After(2 * time.Millisecond):
				continue
			}
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGSTOP)
		}
		cycles++
		select {
		case <-stop:
		case <-time.After(360 * time.Millisecond):
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
		select {
		case <-stop:
			for _, pid := range pidsOf(bin) {
				syscall.Kill(pid, syscall.SIGCONT)
			}
			return cycles
		case <-time.After(40 * time.Millisecond):
		}
	}
}

// pidsOf are the processes whose executable is bin.
func pidsOf(bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == bin {
			out = append(out, pid)
		}
	}
	return out
}
