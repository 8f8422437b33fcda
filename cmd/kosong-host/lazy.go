package main

import (
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/providers/config"
)

// declarations is where plugins' declarations are kept, so that a plugin
// starts at its first call (host/plugin, lazy.go); nil, every plugin
// starts when the session opens: --eager-plugins, eager_plugins: true in
// the configuration file cf, or no user cache folder.
func (g *globals) declarations(cf *config.File) declcache.Store {
	if g.eagerPlugins || cf != nil && cf.EagerPlugins {
		return nil
	}
	store, err := declcache.Default()
	if err != nil {
		return nil
	}
	return store
}

// useHashCache keeps the sha256 of plugin binaries in the host's cache
// folder, hashes, for the next runs (pins.FileSHA256).
func useHashCache() {
	if dir, err := declcache.CacheDir(); err == nil {
		pins.SetHashCacheDir(filepath.Join(dir, "hashes"))
	}
}
