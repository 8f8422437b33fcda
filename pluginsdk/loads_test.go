package pluginsdk

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

type noArgs struct{}

func counter(opts ...Option) Definition {
	return NewTool[noArgs]("Count", "Counts its calls in this load.", func() (HandlerFunc[noArgs], error) {
		var n atomic.Int64
		return func(context.Context, noArgs) Result {
			return Ok(fmt.Sprint(n.Add(1)))
		}, nil
	}, opts...)
}

func TestDescribeSharedLoads(t *testing.T) {
	tests := []struct {
		name string
		defs []Definition
		want bool
	}{
		{"tools keep no process state", []Definition{counter()}, true},
		{"a tool keeps process state", []Definition{counter(KeepsProcessState()), NewTool[noArgs]("Other", "x", func() (HandlerFunc[noArgs], error) {
			return func(context.Context, noArgs) Result { return Ok("") }, nil
		})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := newServer(tt.defs, nil).Describe(context.Background())
			if d.SharedLoads != tt.want {
				t.Fatalf("SharedLoads = %v, want %v", d.SharedLoads, tt.want)
			}
		})
	}
}

// TestLoadsAreSeparate: each load has its own tools; a call
// names its load; Unload drops one load and leaves the others.
func TestLoadsAreSeparate(t *testing.T) {
	s := newServer([]Definition{counter()}, nil)
	ctx := context.Background()
	noDial := func() (*pluginrpc.HostClient, error) {
		t.Fatal("dialled the host without capabilities offered")
		return nil, nil
	}
	for _, id := range []string{"a", "b", ""} {
		loads, err := s.Load(ctx, pluginrpc.LoadRequest{LoadID: id, Session: pluginrpc.Session{ID: "s-" + id}}, noDial)
		if err != nil || len(loads) != 1 || loads[0].Status != pluginrpc.StatusLoaded {
			t.Fatalf("load %q: %+v %v", id, loads, err)
		}
	}
	call := func(load string) pluginrpc.Result {
		r, err := s.Call(ctx, pluginrpc.CallRequest{ToolCallID: "c", ToolName: "Count", LoadID: load, Arguments: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	text := func(r pluginrpc.Result) string {
		var b strings.Builder
		for _, p := range r.Output {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	for _, tt := range []struct{ load, want string }{{"a", "1"}, {"a", "2"}, {"b", "1"}, {"", "1"}} {
		if got := text(call(tt.load)); got != tt.want {
			t.Fatalf("load %q: %q, want %q", tt.load, got, tt.want)
		}
	}
	if err := s.Unload(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if r := call("a"); r.Kind != pluginrpc.ResultError || !strings.Contains(r.Message, "not loaded") {
		t.Fatalf("call after unload: %+v", r)
	}
	if got := text(call("b")); got != "2" {
		t.Fatalf("b after a was unloaded: %q", got)
	}
	if err := s.Unload(ctx, "no-such-load"); err != nil {
		t.Fatalf("unload of an unknown load: %v", err)
	}
}
