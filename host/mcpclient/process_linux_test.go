package mcpclient_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
)

// running reports whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestCloseKillsProcessGroup: closing a stdio server kills what it started.
func TestCloseKillsProcessGroup(t *testing.T) {
	ts, l := load(t, options(approval.Yolo{}), stdio(t, "test"))
	r := call(context.Background(), ts, "test__spawn", `{}`)
	pid, err := strconv.Atoi(r.OutputText())
	if err != nil || !running(pid) {
		t.Fatalf("spawn: %+v", r)
	}
	server := l.Servers[0]
	l.Close()
	deadline := time.Now().Add(20 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server's child %d outlived Close of %s", pid, server.Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
