//go:build unix

package pluginsdk_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// servePluginEnv makes the test binary a plugin serving spawnTool.
const servePluginEnv = "PLUGINSDK_TEST_SERVE_DIR"

// badPluginEnv makes the test binary a plugin whose tool is declared
// wrongly, calling Serve as a statement.
const badPluginEnv = "PLUGINSDK_TEST_BAD_DECLARATION"

func TestMain(m *testing.M) {
	if os.Getenv(badPluginEnv) != "" {
		pluginsdk.Serve(pluginsdk.NewTool[oldStyle]("Old", "Old.", func() (pluginsdk.HandlerFunc[oldStyle], error) {
			return func(context.Context, oldStyle) pluginsdk.Result { return pluginsdk.Ok("") }, nil
		}))
		os.Exit(0) // Serve returned: the test sees a success it must not
	}
	if dir := os.Getenv(servePluginEnv); dir != "" {
		err := pluginsdk.Serve(spawnTool())
		// Serve returned: record it, for the test to check it was a normal return.
		_ = os.WriteFile(filepath.Join(dir, "returned"), []byte(fmt.Sprint(err)), 0o644)
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type empty struct{}

// oldStyle has the description tag of an earlier SDK (and other
// generators), which the SDK refuses.
type oldStyle struct {
	Text string `json:"text" jsonschema:"description=The text."`
}

// spawnTool starts `sleep` in a process group of its own, tracks the group
// and answers with its pid.
func spawnTool() pluginsdk.Definition {
	return pluginsdk.NewTool[empty]("Spawn", "Starts a process group.", func() (pluginsdk.HandlerFunc[empty], error) {
		return func(context.Context, empty) pluginsdk.Result {
			cmd := exec.Command("sleep", "300")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				return pluginsdk.Error(err.Error())
			}
			pluginsdk.TrackProcessGroup(cmd.Process.Pid)
			go func() { _ = cmd.Wait() }()
			return pluginsdk.Ok(strconv.Itoa(cmd.Process.Pid))
		}, nil
	})
}

// gone reports whether pid is dead (or a zombie waiting to be reaped).
func gone(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] == "Z"
	}
	return syscall.Kill(pid, 0) != nil
}

// TestServeKillsTrackedGroupsOnReturn checks that when the host ends a
// plugin the graceful way, Serve returns and the tracked process groups die
// with it.
func TestServeKillsTrackedGroupsOnReturn(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), servePluginEnv+"="+dir)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{pluginrpc.ProtocolVersion: {pluginrpc.PluginName: &pluginrpc.Plugin{}}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     30 * time.Second,
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(pluginrpc.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	remote := raw.(*pluginrpc.Client)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := remote.Load(ctx, pluginrpc.LoadRequest{}); err != nil {
		t.Fatal(err)
	}
	res, err := remote.Call(ctx, pluginrpc.CallRequest{ToolCallID: "c1", ToolName: "Spawn", Arguments: []byte(`{}`)})
	if err != nil || len(res.Output) != 1 {
		t.Fatalf("call: %+v, %v", res, err)
	}
	pid, err := strconv.Atoi(res.Output[0].Text)
	if err != nil {
		t.Fatalf("pid %q: %v", res.Output[0].Text, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	if gone(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}

	client.Kill() // graceful: the plugin's Serve returns

	got, err := os.ReadFile(filepath.Join(dir, "returned"))
	if err != nil || string(got) != "<nil>" {
		t.Fatalf("Serve did not return nil: %q, %v", got, err)
	}
	for deadline := time.Now().Add(10 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("tracked process %d survived the plugin", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeFailsAloudUnderAHost: a plugin started by a host whose tools
// are declared wrongly says why on stderr, in the line the host quotes,
// and exits 1, although its main ignores what Serve returns.
func TestServeFailsAloudUnderAHost(t *testing.T) {
	tests := []struct {
		name   string
		cookie string
		code   int
		stderr string
	}{
		{"started by a host", pluginrpc.Handshake.MagicCookieValue, 1,
			"kosong-plugin: failed to declare its tools: tool Old: "},
		{"run by hand", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), badPluginEnv+"=1", pluginrpc.Handshake.MagicCookieKey+"="+tt.cookie)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSpace(stderr.String())
			if code != tt.code || !strings.HasPrefix(got, tt.stderr) || (tt.stderr == "") != (got == "") {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, got, tt.code, tt.stderr)
			}
			if tt.stderr != "" && (strings.Contains(got, "\n") || !strings.Contains(got, "description=")) {
				t.Fatalf("stderr %q is not the one line naming the tag", got)
			}
		})
	}
}

func TestServeErrors(t *testing.T) {
	t.Run("declaration error", func(t *testing.T) {
		t.Setenv(pluginrpc.Handshake.MagicCookieKey, "")
		err := pluginsdk.Serve(pluginsdk.NewTool[empty]("Bad", "Bad.", 42))
		if err == nil || !strings.Contains(err.Error(), "tool Bad: constructor must be a function, got int") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("not launched by a host", func(t *testing.T) {
		t.Setenv(pluginrpc.Handshake.MagicCookieKey, "")
		if err := pluginsdk.Serve(spawnTool()); !errors.Is(err, pluginrpc.ErrNotLaunched) {
			t.Fatalf("err = %v", err)
		}
	})
}
