//go:build !unix

package pluginsdk

import "os"

// watchParent: the host ends plugins itself on this platform.
func watchParent() {}

// killGroup: process groups are a unix notion.
func killGroup(int) {}

// exitWithGroups exits the plugin.
func exitWithGroups() { os.Exit(1) }
