// Command kosong-plugin-think serves the tools of package think as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-think overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/think"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(think.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
