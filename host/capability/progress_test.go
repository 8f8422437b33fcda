package capability

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

func TestProgress(t *testing.T) {
	sinks := &ProgressSinks{}
	var got []ProgressReport
	unregister := sinks.Register("c1", nil, func(r ProgressReport) { got = append(got, r) })
	mine := calls{"c1": "Index"}
	declared := map[string][]string{"Index": {pluginrpc.CapProgress}}
	tests := []struct {
		name string
		host *Host
		id   string
		code codes.Code
	}{
		{"reported by a running call", &Host{Plugin: "p", Progress: sinks, Calls: mine, Declared: declared}, "c1", codes.OK},
		{"no call in progress", &Host{Plugin: "p", Progress: sinks, Calls: mine, Declared: declared}, "c2", codes.FailedPrecondition},
		{"another plugin's call", &Host{Plugin: "p", Progress: sinks, Calls: calls{}, Declared: declared}, "c1", codes.FailedPrecondition},
		{"no call id", &Host{Plugin: "p", Progress: sinks, Calls: mine, Declared: declared}, "", codes.FailedPrecondition},
		{"no sinks", &Host{Plugin: "p"}, "c1", codes.Unimplemented},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.host.ReportProgress(context.Background(), pluginrpc.ProgressReport{
				ToolCallID: tt.id, ToolName: "Claimed", Progress: 3, Total: 10, Message: "files"})
			if status.Code(err) != tt.code {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.code)
			}
		})
	}
	want := ProgressReport{ToolCallID: "c1", ToolName: "Index", Progress: 3, Total: 10, Message: "files"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("sink saw %+v", got)
	}

	// A later registration for the same id is not removed by the earlier one's unregister.
	var second int
	unregisterSecond := sinks.Register("c1", nil, func(ProgressReport) { second++ })
	unregister()
	if !sinks.deliver(want) || second != 1 {
		t.Fatal("the second registration was removed")
	}
	unregisterSecond()
	if sinks.deliver(want) {
		t.Fatal("delivered after unregister")
	}
}
