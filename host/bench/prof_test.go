//go:build unix

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/providers"
)

func BenchmarkZZProf(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "s.md"), []byte("x"), 0o644)
	path := filepath.Join(dir, "agent.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("version: 1\nagent:\n  name: b\n  system_prompt_path: ./s.md\n  tools: [%q]\n", "/tmp/speed/echoprof/echoprof")), 0o644)
	ctx := context.Background()
	a, err := agent.Load(ctx, path, agent.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Yolo{}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	for range 30000 {
		r := a.Toolset.Handle(ctx, providers.ToolCall{ID: "c", Name: "Echo", Arguments: `{"text":"hello"}`}).Result()
		if r.IsError() {
			b.Fatal(r.Message)
		}
	}
}
