// Command noisy is a test plugin that prints to stdout before serving.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type empty struct{}

func main() {
	fmt.Println("hello from a plugin that talks too much")
	err := pluginsdk.Serve(pluginsdk.NewTool[empty]("Noisy", "Noisy.", func() (pluginsdk.HandlerFunc[empty], error) {
		return func(context.Context, empty) pluginsdk.Result { return pluginsdk.Ok("") }, nil
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
