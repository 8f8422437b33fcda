// Command kosong-plugin-todo serves the tools of package todo as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-todo overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/todo"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(todo.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
