package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/supervise"
	"github.com/kosong-host/kosong-host/pluginsdk/arguments"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// A plugin starts when first needed: Load offers its tools from what the
// declaration cache (Options.Declarations, host/declcache) kept of an
// earlier start of the same binary, and the plugin starts at its first
// call, under the same supervision, pins and sandbox. Two records are
// kept:
//
//   - the binary's Describe, keyed by its content (sha256, computed once
//     per content: pins.FileSHA256), its arguments, the environment it
//     inherits and the protocol version;
//   - the outcome of a Load (each tool loaded or skipped, with the
//     reason), keyed by that and by everything a constructor is given
//     before any call: the tools, their configurations, the capabilities
//     offered, the model's facts, whether there is a state dir, the
//     sandbox. A skip is thus decided again when any of these changes.
//
// A record is a declaration, never a verdict: the pins are checked at
// Load (against the hash the key was made of) and again when the plugin
// starts, the sandbox applies when it starts, and the binary that starts
// must declare what the record said of every tool offered, and load them,
// or the call fails, the records are dropped and the next session
// describes the plugin again. A record that does not decode, breaks a
// limit, or does not match its key is ignored (the plugin then starts at
// Load, as without a cache).

// declVersion is the version of the records' layout.
const declVersion = 1

// describeRecord is a binary's Describe, as kept.
type describeRecord struct {
	Version     int                  `json:"version"`
	Tools       []pluginrpc.ToolSpec `json:"tools"`
	SharedLoads bool                 `json:"shared_loads,omitempty"`
}

// loadRecord is a Load's outcome, as kept.
type loadRecord struct {
	Version int                  `json:"version"`
	Loads   []pluginrpc.ToolLoad `json:"loads"`
}

// declared is what a plugin not started at Load was loaded from.
type declared struct {
	store   declcache.Store
	descKey string
	loadKey string
	tools   map[string]pluginrpc.ToolSpec
}

// describeKey is the key of the binary's Describe (sum is its sha256).
func describeKey(cfg Config, sum string) string {
	return declcache.Key("describe", declVersion, pluginrpc.ProtocolVersion, sum, cfg.Args, cfg.Builtin,
		proc.Env(cfg.getenv(), cfg.Env...))
}

func (cfg Config) getenv() func(string) string {
	if cfg.Getenv != nil {
		return cfg.Getenv
	}
	return os.Getenv
}

// loadKey is the key of the Load of pr's tools.
func (pr *prepared) loadKey(descKey string, opts Options) string {
	p := pr.plugin
	return declcache.Key("load", declVersion, descKey, pr.toLoad, pr.configs, p.host.Offered(), opts.Model,
		p.stateDir != "", sessionFree(pr.sp.Config.Sandbox, opts.StateDir))
}

// sessionFree is the sandbox policy with the session's state dir (each
// session's own) named by a placeholder, so that the key holds from one
// session to the next.
func sessionFree(sb *sandbox.Policy, stateDir string) *sandbox.Policy {
	if sb == nil || stateDir == "" {
		return sb
	}
	cp := *sb
	free := func(paths []string) []string {
		out := make([]string, len(paths))
		for i, path := range paths {
			if rel, err := filepath.Rel(stateDir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				path = filepath.Join("$STATE_DIR", rel)
			}
			out[i] = path
		}
		return out
	}
	cp.Read, cp.Write = free(sb.Read), free(sb.Write)
	return &cp
}

// loadDeclared loads sp from the declaration cache without starting it;
// ok is false when the cache has no valid record for it (or its pin does
// not hold), and it is to start now.
func loadDeclared(sp Spec, opts Options) (out pluginLoad, ok bool) {
	cfg := sp.launchConfig()
	if cfg.Remote != nil {
		return out, false
	}
	if err := checkBinary(cfg.Path, cfg.SHA256, cfg.LockFile); err != nil {
		return out, false // the start says why
	}
	sum, err := pins.FileSHA256(cfg.Path)
	if err != nil {
		return out, false
	}
	descKey := describeKey(cfg, sum)
	desc, ok := readDescribe(opts.Declarations, descKey)
	if !ok {
		return out, false
	}
	pr := prepare(sp, desc.Tools, opts)
	if len(pr.failures) > 0 || pr.stateErr != nil {
		return out, false // the start reports them
	}
	loadKey := pr.loadKey(descKey, opts)
	loads, ok := readLoads(opts.Declarations, loadKey, pr.toLoad)
	if !ok {
		return out, false
	}
	p := pr.plugin
	p.decl = &declared{store: opts.Declarations, descKey: descKey, loadKey: loadKey, tools: pr.described}
	p.sup = supervise.NewIdle(supervise.Config[*Process]{
		Name: "plugin " + sp.Name, Start: p.start, Backoff: opts.RestartBackoff,
		Grace: p.cfg.CancelGrace, Logger: p.cfg.Logger,
	})
	rows, failures := pr.statuses(loads, cfg.Path, opts)
	if len(failures) > 0 {
		p.Close()
		return pluginLoad{}, false
	}
	return pluginLoad{plugin: p, status: rows}, true
}

// record keeps what the plugin started at Load declared and how its tools
// loaded, for the next sessions; a failed write only costs a start.
func (pr *prepared) record(opts Options, first *Process, loads []pluginrpc.ToolLoad) {
	cfg := pr.plugin.cfg
	if cfg.Remote != nil {
		return
	}
	sum, err := pins.FileSHA256(cfg.Path)
	if err != nil {
		return
	}
	descKey := describeKey(cfg, sum)
	desc, err := json.Marshal(describeRecord{Version: declVersion, Tools: first.Tools, SharedLoads: first.SharedLoads})
	if err != nil {
		return
	}
	outcome, err := json.Marshal(loadRecord{Version: declVersion, Loads: loads})
	if err != nil {
		return
	}
	if err := opts.Declarations.Put(descKey, desc); err != nil {
		cfg.Logger.Debug("declaration cache", "plugin", cfg.Name, "error", err)
		return
	}
	if err := opts.Declarations.Put(pr.loadKey(descKey, opts), outcome); err != nil {
		cfg.Logger.Debug("declaration cache", "plugin", cfg.Name, "error", err)
	}
}

// readDescribe reads and checks a kept Describe.
func readDescribe(store declcache.Store, key string) (describeRecord, bool) {
	var rec describeRecord
	data, ok := store.Get(key)
	if !ok || json.Unmarshal(data, &rec) != nil || rec.Version != declVersion {
		return rec, false
	}
	seen := map[string]bool{}
	for _, t := range rec.Tools {
		if !validToolSpec(t) || seen[t.Name] {
			return rec, false
		}
		seen[t.Name] = true
	}
	return rec, true
}

// validToolSpec: a kept tool declaration is one the host would take from
// a binary: a name, a schema that compiles, a description and schema
// within the limits, known capabilities.
func validToolSpec(t pluginrpc.ToolSpec) bool {
	if t.Name == "" || len(t.Name) > limits.BriefChars || strings.ContainsAny(t.Name, "\x00\n\r") || t.DefaultTimeout < 0 {
		return false
	}
	if checkSpec("", t) != nil {
		return false
	}
	if _, err := arguments.Compile(t.Name, t.ParametersSchema); err != nil {
		return false
	}
	for _, c := range t.Capabilities {
		if c == "" || len(c) > 64 {
			return false
		}
	}
	return true
}

// readLoads reads and checks a kept Load outcome: one row for each tool
// of toLoad, in order, loaded or skipped.
func readLoads(store declcache.Store, key string, toLoad []string) ([]pluginrpc.ToolLoad, bool) {
	var rec loadRecord
	data, ok := store.Get(key)
	if !ok || json.Unmarshal(data, &rec) != nil || rec.Version != declVersion || len(rec.Loads) != len(toLoad) {
		return nil, false
	}
	for i, tl := range rec.Loads {
		if tl.Name != toLoad[i] || (tl.Status != pluginrpc.StatusLoaded && tl.Status != pluginrpc.StatusSkipped) {
			return nil, false
		}
	}
	return rec.Loads, true
}

// check says whether what the started binary declares of the tools
// offered (loaded) is what the declaration said; a plugin that started at
// Load (d nil) has nothing to check. A difference drops the records.
func (d *declared) check(plugin string, tools []pluginrpc.ToolSpec, loaded []string) error {
	if d == nil {
		return nil
	}
	for _, name := range loaded {
		i := slices.IndexFunc(tools, func(t pluginrpc.ToolSpec) bool { return t.Name == name })
		if i < 0 {
			d.stale()
			return fmt.Errorf("plugin %s: its binary no longer declares tool %s (its declaration was cached; the next session describes it again)", plugin, name)
		}
		if !sameSpec(d.tools[name], tools[i]) {
			d.stale()
			return fmt.Errorf("plugin %s: tool %s is not declared as when it was cached (name, description, schema, capabilities or annotations differ); the next session describes it again", plugin, name)
		}
	}
	return nil
}

// stale drops the records the plugin was loaded from.
func (d *declared) stale() {
	if d == nil {
		return
	}
	d.store.Drop(d.descKey)
	d.store.Drop(d.loadKey)
}

func sameSpec(a, b pluginrpc.ToolSpec) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
