// Command kosong-plugin-media serves the tools of package media as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-media overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/media"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(media.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
