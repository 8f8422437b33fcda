package conversation

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/pluginpool"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers"
)

// TestConversationsShareAPluginProcess: conversations opened with one
// pool run a plugin in one process, each with its own tools (its own
// session id, its own counter); the process stops with the last one.
func TestConversationsShareAPluginProcess(t *testing.T) {
	bin, err := testbin.Build("host/testdata/plugins/sessions", "pooled/kosong-plugin-sessions")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(testbin.Cleanup)
	pool := pluginpool.New()
	t.Cleanup(pool.Close)
	open := func() *Conversation {
		cfg := setup(t, map[string]string{
			"agent.yaml":  "version: 1\nagent:\n  name: pooled\n  system_prompt_path: ./s.md\n  tools: [sessions]\n",
			"script.yaml": "turns:\n  - tool_calls:\n      - {id: c1, name: Count, arguments: {}}\n  - text: Counted.\n",
		})
		cfg.Load.PluginDirs = []string{filepath.Dir(bin)}
		cfg.Plugins = pool
		conv, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conv.Close)
		return conv
	}
	convs := []*Conversation{open(), open()}
	proc := convs[0].Agent().Plugins[0].Current()
	if other := convs[1].Agent().Plugins[0].Current(); other.Pid() != proc.Pid() {
		t.Fatalf("two conversations, plugin processes %d and %d: want one", proc.Pid(), other.Pid())
	}
	for _, conv := range convs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := conv.Turn(ctx, "count")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, m := range conv.History() {
			if m.Role == providers.RoleTool {
				got = m.Text()
			}
		}
		if !strings.HasPrefix(got, "session="+conv.ID()+" count=1 ") {
			t.Errorf("conversation %s: Count said %q", conv.ID(), got)
		}
	}
	convs[0].Close()
	if convs[1].Agent().Plugins[0].Current() != proc {
		t.Fatal("closing one conversation changed the other's process")
	}
	convs[1].Close()
	select {
	case <-proc.Done():
	case <-time.After(time.Minute):
		t.Fatal("the shared process outlived its conversations")
	}
}
