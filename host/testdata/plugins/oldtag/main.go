// Command oldtag is a test plugin written against an earlier SDK: its
// parameters carry the description tag of that SDK (and of other schema
// generators), which the SDK refuses, and its main calls Serve as a
// statement, ignoring the error.
package main

import (
	"context"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

type greetParams struct {
	Name string `json:"name" jsonschema:"description=Who to greet."`
}

func main() {
	pluginsdk.Serve(pluginsdk.NewTool[greetParams]("Greet", "Greet someone.", func() (pluginsdk.HandlerFunc[greetParams], error) {
		return func(_ context.Context, p greetParams) pluginsdk.Result { return pluginsdk.Ok("hello " + p.Name) }, nil
	}))
}
