package spec

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A stdio MCP server's sandbox is parsed as a plugin's; nil when it sets none.
func TestMCPServerSandbox(t *testing.T) {
	s, dir, err := load(t, map[string]string{"agent.yaml": mcpHead + `  mcp_servers:
    boxed:
      command: ./server
      sandbox: {write: [$WORK_DIR, ./out], network: [443], required: true}
    free:
      command: ./server
`}, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := s.MCPServers[0].Sandbox
	want := &Sandbox{Write: []string{"$WORK_DIR", filepath.Join(dir, "out")}, Ports: []uint16{443}, Required: true,
		File: filepath.Join(dir, "agent.yaml"), Line: 9}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sandbox = %+v, want %+v", got, want)
	}
	if s.MCPServers[1].Sandbox != nil {
		t.Errorf("a server without sandbox has %+v", s.MCPServers[1].Sandbox)
	}
}

func TestMCPServerSandboxErrors(t *testing.T) {
	for _, tc := range []struct{ name, servers, want string }{
		{"with url", "  mcp_servers:\n    a:\n      url: http://h/mcp\n      sandbox: {network: none}\n", `:9: mcp server "a": sandbox is for stdio servers (with command), not with url`},
		{"unknown key", "  mcp_servers:\n    a:\n      command: x\n      sandbox: {writable: [/]}\n", `mcp server "a": sandbox`},
		{"bad network", "  mcp_servers:\n    a:\n      command: x\n      sandbox: {network: some}\n", `mcp server "a": sandbox: network must be none, all or a list of TCP ports, got some`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dir, err := load(t, map[string]string{"agent.yaml": mcpHead + tc.servers}, "agent.yaml", LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "agent.yaml")+":") {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
