// Command kosong-plugin-think serves the tools of package think as a plugin
// binary of its own. kosong-host serves the same tools as a built-in; an
// installed kosong-plugin-think overrides it.
package main

import (
	"github.com/kosong-host/kosong-host/plugins/think"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

func main() { pluginsdk.Serve(think.Tools()...) }
