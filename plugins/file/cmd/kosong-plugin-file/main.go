// Command kosong-plugin-file serves the tools of package file as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-file overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/file"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(file.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
