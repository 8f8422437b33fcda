// Command kosong-plugin-ask serves the tools of package ask as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-ask overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/ask"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(ask.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
