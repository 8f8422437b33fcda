// Command sessions is a test plugin for processes shared between sessions:
// Count keeps a counter its constructor made (the state of one load) and
// answers with it, the session id the host gave and the process id; Block
// reports progress (on its session's capability connection), then waits
// until its call is cancelled; Crash exits the process
// mid-call. With $KOSONG_TEST_ALONE set, Count declares that it keeps
// per-process state, so the binary does not serve several sessions.
package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type empty struct{}

func main() {
	var opts []pluginsdk.Option
	if os.Getenv("KOSONG_TEST_ALONE") != "" {
		opts = append(opts, pluginsdk.KeepsProcessState())
	}
	pluginsdk.Serve(
		pluginsdk.NewTool[empty]("Count", "Counts its calls in this load.", func(s pluginsdk.Session) (pluginsdk.HandlerFunc[empty], error) {
			var n atomic.Int64
			return func(context.Context, empty) pluginsdk.Result {
				return pluginsdk.Ok(fmt.Sprintf("session=%s count=%d pid=%d", s.ID(), n.Add(1), os.Getpid()))
			}, nil
		}, opts...),
		pluginsdk.NewTool[empty]("Block", "Reports that it runs, then waits until cancelled.", func(p pluginsdk.Progress) (pluginsdk.HandlerFunc[empty], error) {
			return func(ctx context.Context, _ empty) pluginsdk.Result {
				_ = p.Report(ctx, 0, 1, "blocking")
				<-ctx.Done()
				return pluginsdk.Error("cancelled")
			}, nil
		}),
		pluginsdk.NewTool[empty]("Crash", "Exits the plugin process mid-call.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result {
				// A panic outside the handler takes the process down.
				go func() { panic("crashing on purpose") }()
				select {}
			}, nil
		}),
	)
}
