// Command gated is a test plugin whose Load a test can hold: when the fifo
// named by $KOSONG_TEST_GATE exists, the constructor of Pid opens it and
// reads it to the end, so the Load waits until the test has opened the fifo
// for writing and closed it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type empty struct{}

func main() {
	pluginsdk.Serve(
		pluginsdk.NewTool[empty]("Pid", "Returns the plugin's process id.", func() (pluginsdk.HandlerFunc[empty], error) {
			if gate := os.Getenv("KOSONG_TEST_GATE"); gate != "" {
				if _, err := os.Stat(gate); err == nil {
					f, err := os.Open(gate) // waits for a writer
					if err != nil {
						return nil, err
					}
					_, _ = io.Copy(io.Discard, f)
					f.Close()
				}
			}
			return func(context.Context, empty) pluginsdk.Result {
				return pluginsdk.Ok(strconv.Itoa(os.Getpid()))
			}, nil
		}),
		pluginsdk.NewTool[empty]("Exit", "Exits the plugin process mid-call.", func() (pluginsdk.HandlerFunc[empty], error) {
			return func(context.Context, empty) pluginsdk.Result {
				fmt.Fprintln(os.Stderr, "gated: exiting on purpose")
				os.Exit(3)
				return pluginsdk.Ok("unreachable")
			}, nil
		}),
	)
}
