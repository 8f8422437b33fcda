// Command kosong-plugin-web serves the tools of package web as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-web overrides it.
package main

import (
	"fmt"
	"os"

	"github.com/kosong-host/kosong-host/plugins/web"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() {
	if err := pluginsdk.Serve(web.Tools()...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
