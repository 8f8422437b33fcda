package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// mcpSDKVersion is the version of the official TypeScript MCP SDK the
// test installs (npm view @modelcontextprotocol/sdk version).
const mcpSDKVersion = "1.32.2"

// TestMCPServeAnnotationsTSClient: the official TypeScript MCP SDK client,
// run by node (testdata/mcpsdk/list-tools.cjs), connects to `mcp serve`
// over stdio, lists its tools and reads the hints each declares: Echo
// (read-only), Shell (destructive, open-world), the agent's MCP tool
// test__echo (its server's readOnlyHint and openWorldHint); test__add
// declares none.
func TestMCPServeAnnotationsTSClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testcomponent.Missing(t, err)
	}
	sdk := testcomponent.NeedNPM(t, "@modelcontextprotocol/sdk", mcpSDKVersion)
	script, err := filepath.Abs(filepath.Join("testdata", "mcpsdk", "list-tools.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, kosongHost(t), "--agent", "agent.yaml", "mcp", "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+t.TempDir(), "NODE_PATH="+filepath.Join(sdk, "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node list-tools.cjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var res struct {
		Server struct{ Name string }
		Tools  []struct {
			Name        string
			Annotations map[string]any
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res.Server.Name != "kosong-host" {
		t.Errorf("server %+v", res.Server)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.Annotations)
		got[tl.Name] = string(b)
	}
	want := map[string]string{
		"Echo":       `{"destructiveHint":false,"idempotentHint":false,"openWorldHint":false,"readOnlyHint":true}`,
		"Shell":      `{"destructiveHint":true,"idempotentHint":false,"openWorldHint":true,"readOnlyHint":false}`,
		"test__echo": `{"idempotentHint":false,"openWorldHint":false,"readOnlyHint":true}`,
		"test__add":  `null`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: annotations %s, want %s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tools %v, want %d", got, len(want))
	}
}
