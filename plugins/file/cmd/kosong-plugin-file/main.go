// Command kosong-plugin-file serves the tools of package file as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-file overrides it.
package main

import (
	"github.com/kosong-host/kosong-host/plugins/file"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() { pluginsdk.Serve(file.Tools()...) }
