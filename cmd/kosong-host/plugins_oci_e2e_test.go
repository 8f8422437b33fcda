package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/distribution/registrytest"
)

// ociEnv is a machine of the test: its own cache, configuration and
// (absent) admin policy.
type ociEnv struct {
	t                  *testing.T
	dir, cache, config string
	policy             string
}

func newOCIEnv(t *testing.T, dir string) *ociEnv {
	e := &ociEnv{t: t, dir: dir, cache: t.TempDir(), config: t.TempDir(), policy: filepath.Join(t.TempDir(), "policy.yaml")}
	return e
}

func (e *ociEnv) writeConfig(body string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.config, "kosong-host"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.config, "kosong-host", "config.yaml"), []byte(body), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *ociEnv) run(args ...string) result {
	e.t.Helper()
	env := []string{"XDG_CACHE_HOME=" + e.cache, "XDG_CONFIG_HOME=" + e.config, "KOSONG_HOST_POLICY=" + e.policy,
		"DOCKER_CONFIG=" + e.config}
	return runCommand(e.t, kosongHost(e.t), e.dir, env, "", append([]string{"--trust"}, args...)...)
}

func (e *ociEnv) must(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

func (e *ociEnv) refused(want string, args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		e.t.Fatalf("%v: exit %d, want a refusal with %q\nstdout %s\nstderr %s", args, r.code, want, r.stdout, r.stderr)
	}
	return r
}

// cachedBinaries lists the binaries in a plugin cache.
func cachedBinaries(t *testing.T, cache string) []string {
	files, _ := filepath.Glob(filepath.Join(cache, "kosong-host", "plugins", "sha256", "*", "plugin"))
	return files
}

func copyWithSuffix(t *testing.T, src, suffix string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, append(b, suffix...), 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPluginsFromARegistry publishes the echo plugin for two platforms,
// signed, to a real registry; an agent with an oci:// source installs it
// on its first run (saying so), locks both platforms, and is refused on
// a moved tag, an unsigned or wrongly signed artifact, a forbidden source
// and a project plugin the policy forbids; a mirror serves it with the
// registry stopped.
func TestPluginsFromARegistry(t *testing.T) {
	reg := registrytest.Start(t)
	echo := standalonePlugin(t, "echo")
	work := t.TempDir()
	keys := t.TempDir()
	host := reg.Host
	e := newOCIEnv(t, work)
	e.must("plugins", "keygen", filepath.Join(keys, "team"))
	e.must("plugins", "keygen", filepath.Join(keys, "other"))
	if fi, err := os.Stat(filepath.Join(keys, "team.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("team.key: %v %v", fi, err)
	}
	e.refused("exists: not overwritten", "plugins", "keygen", filepath.Join(keys, "team"))

	darwin := copyWithSuffix(t, echo, "darwin")
	pub := e.must("plugins", "publish", "oci://"+host+"/team/echo:1.0.0", "--platform", "linux/amd64="+echo,
		"--platform", "darwin/arm64="+darwin, "--sign", filepath.Join(keys, "team.key"))
	if !strings.Contains(pub.stdout, "published oci://"+host+"/team/echo:1.0.0@sha256:") || !strings.Contains(pub.stdout, "signed ") {
		t.Fatalf("publish: %s", pub.stdout)
	}
	info := e.must("plugins", "info", "oci://"+host+"/team/echo", "--version", "~> 1.0")
	for _, want := range []string{"Version:   1.0.0", "Platform:  darwin/arm64", "Platform:  linux/amd64", "  Echo: "} {
		if !strings.Contains(info.stdout, want) {
			t.Fatalf("info lacks %q:\n%s", want, info.stdout)
		}
	}

	agentYAML := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools:\n    - plugin: echo\n      source: oci://" + host + "/team/echo\n      version: \"~> 1.0\"\n      tools: [Echo]\n"
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(agentYAML), 0o644)
	os.WriteFile(filepath.Join(work, "s.md"), []byte("hi"), 0o644)
	e.writeConfig("plugin_trust:\n  - repositories: [\"" + host + "/team/*\"]\n    keys: [" + filepath.Join(keys, "team.pub") + "]\n")

	// The first run installs, saying so; the next finds it in the cache.
	r := e.must("--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"from the registry"}`)
	if r.stdout != "from the registry\n" || !strings.Contains(r.stderr, "plugin echo is not in the plugin cache: installing it from oci://"+host+"/team/echo (version ~> 1.0)") {
		t.Fatalf("first run: %q %q", r.stdout, r.stderr)
	}
	r = e.must("--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"again"}`)
	if r.stdout != "again\n" || strings.Contains(r.stderr, "installing") {
		t.Fatalf("second run: %q %q", r.stdout, r.stderr)
	}

	// A corrupt cache entry is fetched again, not executed.
	bins := cachedBinaries(t, e.cache)
	if len(bins) != 1 {
		t.Fatalf("cache: %v", bins)
	}
	os.WriteFile(bins[0], []byte("#!/bin/sh\necho pwned\n"), 0o755)
	r = e.must("--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"refetched"}`)
	if r.stdout != "refetched\n" || !strings.Contains(r.stderr, "installing") {
		t.Fatalf("after corruption: %q %q", r.stdout, r.stderr)
	}

	// Lock both platforms; a missing platform is refused.
	e.refused("no windows/arm64 binary in the index (it has darwin/arm64, linux/amd64)", "--agent", "agent.yaml", "plugins", "lock", "--platform", "windows/arm64")
	e.must("--agent", "agent.yaml", "plugins", "lock", "--platform", "linux/amd64", "--platform", "darwin/arm64")
	lock, _ := os.ReadFile(filepath.Join(work, "agent.lock.yaml"))
	for _, want := range []string{"source: \"oci://" + host + "/team/echo ~> 1.0\"", "version: \"1.0.0\"", "index: sha256:", "darwin/arm64:", "linux/amd64:", "manifest: sha256:"} {
		if !strings.Contains(string(lock), want) {
			t.Fatalf("lock lacks %q:\n%s", want, lock)
		}
	}
	// Another machine (a cold cache) installs against the lock.
	other := newOCIEnv(t, work)
	other.writeConfig("plugin_trust:\n  - repositories: [\"" + host + "/team/*\"]\n    keys: [" + filepath.Join(keys, "team.pub") + "]\n")
	r = other.must("--agent", "agent.yaml", "plugins", "install")
	if !strings.Contains(r.stdout, "echo 1.0.0 (sha256:") {
		t.Fatalf("install: %s", r.stdout)
	}

	// Mirror, then install with the registry stopped.
	mirror := t.TempDir()
	e.must("--agent", "agent.yaml", "plugins", "mirror", mirror)

	// The tag moves to an unsigned artifact: the lock is stale; without
	// the lock the signature is missing; nothing is cached either way.
	moved := copyWithSuffix(t, echo, "moved")
	e.must("plugins", "publish", "oci://"+host+"/team/echo:1.0.0", "--platform", "linux/amd64="+moved, "--platform", "darwin/arm64="+darwin)
	cold := newOCIEnv(t, work)
	cold.writeConfig("plugin_trust:\n  - repositories: [\"" + host + "/team/*\"]\n    keys: [" + filepath.Join(keys, "team.pub") + "]\n")
	cold.refused("the lock file pins index sha256:", "--agent", "agent.yaml", "plugins", "install")
	os.Rename(filepath.Join(work, "agent.lock.yaml"), filepath.Join(work, "agent.lock.yaml.saved"))
	r = cold.refused("is refused: unsigned; rule plugin_trust[0] of "+filepath.Join(cold.config, "kosong-host", "config.yaml"), "--agent", "agent.yaml", "plugins", "install")
	if !strings.Contains(r.stderr, "oci://"+host+"/team/echo:1.0.0 (sha256:") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("unsigned refusal is not one line naming the reference and digest: %q", r.stderr)
	}
	if got := cachedBinaries(t, cold.cache); len(got) != 0 {
		t.Fatalf("a refused artifact was cached: %v", got)
	}
	// Signed by a key the rule does not list.
	e.must("plugins", "publish", "oci://"+host+"/team/echo:1.1.0", "--platform", "linux/amd64="+moved, "--sign", filepath.Join(keys, "other.key"))
	cold.refused("signed, but not by a listed key", "--agent", "agent.yaml", "plugins", "install")

	// The admin policy forbids the source; then a project agent adding a plugin.
	os.WriteFile(cold.policy, []byte("plugin_sources: [ghcr.io/acme/*]\n"), 0o644)
	cold.refused("plugin echo: plugin source oci://"+host+"/team/echo is refused by the admin policy "+cold.policy+" (rule plugin_sources: ghcr.io/acme/*)", "--agent", "agent.yaml", "plugins", "install")
	pc := cold.run("--agent", "agent.yaml", "policy", "check")
	if pc.code != 1 || !strings.Contains(pc.stdout, "refused: plugin echo: plugin source") {
		t.Fatalf("policy check: %d %q %q", pc.code, pc.stdout, pc.stderr)
	}
	os.WriteFile(cold.policy, []byte("project_plugins: false\nforced: {yolo: forbidden}\n"), 0o644)
	cold.refused("plugin echo added by the project agent file "+filepath.Join(work, "agent.yaml")+" is refused by the admin policy "+cold.policy+" (rule project_plugins: false)", "--agent", "agent.yaml", "plugins", "install")
	cold.refused("yolo (approving every action without asking) is refused by the admin policy "+cold.policy+" (rule forced.yolo: forbidden)", "--agent", "agent.yaml", "run", "--yolo", "-p", "hi")
	os.Remove(cold.policy)

	// With the registry stopped: a warm cache runs, a cold one says why,
	// and the mirror serves the locked artifact.
	os.Rename(filepath.Join(work, "agent.lock.yaml.saved"), filepath.Join(work, "agent.lock.yaml"))
	reg.Stop()
	r = e.must("--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"offline"}`)
	if r.stdout != "offline\n" {
		t.Fatalf("offline, warm: %q %q", r.stdout, r.stderr)
	}
	offline := newOCIEnv(t, work)
	r = offline.refused("has no copy", "--agent", "agent.yaml", "plugins", "install")
	if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("offline, cold: not one line: %q", r.stderr)
	}
	offline.writeConfig("plugin_mirrors: [" + mirror + "]\nplugin_trust:\n  - repositories: [\"" + host + "/team/*\"]\n    keys: [" + filepath.Join(keys, "team.pub") + "]\n")
	r = offline.must("--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"from the mirror"}`)
	if r.stdout != "from the mirror\n" || !strings.Contains(r.stderr, "from mirror "+mirror) {
		t.Fatalf("mirror: %q %q", r.stdout, r.stderr)
	}
}

// TestBuiltinLockSurvivesAnotherHost: a lock file pins a built-in plugin
// by the host's version, and one written with the sha256 of another host
// binary does not stop a run.
func TestBuiltinLockSurvivesAnotherHost(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	r := runHost(t, dir, "", "--agent", "agent.yaml", "plugins", "lock")
	if r.code != 0 {
		t.Fatalf("lock: %d %s", r.code, r.stderr)
	}
	lock, _ := os.ReadFile(filepath.Join(dir, "agent.lock.yaml"))
	if !strings.Contains(string(lock), "echo:\n    builtin: ") || strings.Contains(string(lock), "    sha256:") {
		t.Fatalf("lock:\n%s", lock)
	}
	old := "version: 1\nplugins:\n  echo:\n    path: \"/old/kosong-host\"\n    sha256: " + strings.Repeat("0", 64) + "\n"
	os.WriteFile(filepath.Join(dir, "agent.lock.yaml"), []byte(old), 0o644)
	r = runHost(t, dir, "", "--agent", "agent.yaml", "tools", "call", "Echo", `{"text":"still runs"}`)
	if r.code != 0 || r.stdout != "still runs\n" {
		t.Fatalf("with an old built-in pin: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestPolicyRefusesMCPServers: a run whose agent has an MCP server the
// admin policy does not allow is refused before it starts, naming the
// file and the rule; policy check explains it; a bad policy file is a
// one-line error.
func TestPolicyRefusesMCPServers(t *testing.T) {
	agent := strings.Replace(echoAgent, "  tools:", "  mcp_servers:\n    repo:\n      command: ./tools/server\n    web:\n      url: https://evil.example/mcp\n  tools:", 1)
	dir := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi"})
	e := newOCIEnv(t, dir)
	os.WriteFile(e.policy, []byte("mcp_servers:\n  commands: [/usr/local/bin/*]\n  urls: [https://mcp.acme.example/*]\n"), 0o644)
	r := e.refused("MCP server repo (command "+filepath.Join(dir, "tools/server")+") is refused by the admin policy "+e.policy+" (rule mcp_servers.commands: /usr/local/bin/*)",
		"--agent", "agent.yaml", "run", "-p", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "MCP server web (https://evil.example/mcp) is refused by the admin policy "+e.policy+" (rule mcp_servers.urls: https://mcp.acme.example/*)") {
		t.Fatalf("run: %+v", r)
	}
	pc := e.run("--agent", "agent.yaml", "policy", "check")
	if pc.code != 1 || !strings.Contains(pc.stdout, "admin policy: "+e.policy) || strings.Count(pc.stdout, "refused: MCP server") != 2 {
		t.Fatalf("policy check: %+v", pc)
	}
	os.WriteFile(e.policy, []byte("mcp_server: {}\n"), 0o644)
	bad := e.run("--agent", "agent.yaml", "policy", "check")
	if bad.code != 2 || !strings.Contains(bad.stderr, "policy "+e.policy+": ") || strings.Count(strings.TrimSpace(bad.stderr), "\n") > 0 {
		t.Fatalf("bad policy: %+v", bad)
	}
	os.Remove(e.policy)
	none := e.must("--agent", "agent.yaml", "policy", "check")
	if !strings.Contains(none.stdout, "no admin policy ("+e.policy+" does not exist)") {
		t.Fatalf("no policy: %+v", none)
	}
}

// TestPluginsPublishBadInput: each mistake is a one-line error, exit 2,
// before any registry is reached.
func TestPluginsPublishBadInput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.WriteFile(bin, []byte("x"), 0o755)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plugins", "publish", "ghcr.io/a/b:1"}, "want oci://"},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b:1"}, "give at least one --platform OS/ARCH=PATH"},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b:1", "--platform", "linux"}, `--platform "linux": want OS/ARCH=PATH`},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b:1", "--platform", "linux=" + bin}, "want OS/ARCH"},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b:1", "--platform", "linux/amd64=" + filepath.Join(dir, "missing")}, "is not a file"},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b@sha256:" + strings.Repeat("a", 64), "--platform", "linux/amd64=" + bin}, "give a tag"},
		{[]string{"plugins", "publish", "oci://ghcr.io/a/b:1", "--platform", "plan9/386=" + bin, "--sign", bin}, "not a PEM private key"},
		{[]string{"plugins", "info", "oci://ghcr.io/a/b", "--version", "~> nope"}, `version "~> nope"`},
	}
	e := newOCIEnv(t, dir)
	for _, tc := range tests {
		r := e.run(tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
