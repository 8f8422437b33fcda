//go:build !linux

package proc

import "errors"

// MarkUndumpable: only Linux has the dumpable mark.
func MarkUndumpable() error { return nil }

// ExecUnprivileged: there are no Linux capabilities to drop elsewhere; the
// host does not start children through it.
func ExecUnprivileged(argv, env []string) error {
	return errors.New("starting a child without capabilities is Linux-only")
}

// DropCaps is Linux-only.
func DropCaps() error {
	return errors.New("dropping capabilities is Linux-only")
}

// LimitChildren: there are no Linux capabilities elsewhere.
func LimitChildren() error { return nil }

// DirectStart: there are no Linux capabilities a launcher would drop.
func DirectStart() bool { return true }
