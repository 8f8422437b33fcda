//go:build !unix

package pluginsdk

// watchParent: the host ends plugins itself on this platform.
func watchParent() {}
