//go:build !linux

package repl

// keepCarriageReturn does nothing here: an Enter typed ahead while the
// agent works may arrive as Ctrl-J and add a line instead of submitting.
func keepCarriageReturn(int) (restore func()) { return func() {} }
