// Command kosong-plugin-echo serves the tools of package echo as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-echo overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/echo"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(echo.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
