// Command kosong-plugin-shell serves the tools of package shell as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-shell overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/shell"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(shell.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
