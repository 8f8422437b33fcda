package shell

import "github.com/kosong-host/kosong-host/pluginsdk"

// withSandboxNote adds to r, when the plugin runs in a sandbox and the
// command was refused a permission, a note naming the sandbox.
func withSandboxNote(r pluginsdk.Result) pluginsdk.Result {
	note := pluginsdk.SandboxNote(r.Text())
	if note == "" {
		return r
	}
	if r.Message != "" {
		note = r.Message + "\n" + note
	}
	return r.WithMessage(note)
}
