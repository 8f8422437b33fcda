package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// bound guards against a hang; it is never how long a test waits on purpose.
const bound = 30 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func build(t *testing.T, pkg string) string {
	t.Helper()
	p, err := testbin.Build(pkg, strings.TrimPrefix(filepath.Base(pkg), "kosong-plugin-"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testEnv(k string) string {
	return map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}[k]
}

// spec loads the named tools (nil: every tool) of the binary at path.
func spec(path string, tools ...string) plugin.Spec {
	return plugin.Spec{Config: plugin.Config{Name: filepath.Base(path), Path: path, StartTimeout: bound, Getenv: testEnv}, Tools: tools}
}

// load loads the plugins into a toolset; any failure fails the test.
func load(t *testing.T, specs ...plugin.Spec) (*toolset.Toolset, *plugin.Loaded) {
	t.Helper()
	ts := toolset.New(nil)
	opts := plugin.Options{SessionID: "s1", WorkDir: t.TempDir(), StateDir: t.TempDir(), Decider: approval.Yolo{},
		Env: plugin.Environment("", testEnv), RestartBackoff: 10 * time.Millisecond}
	l := plugin.Load(context.Background(), specs, opts)
	t.Cleanup(l.Close)
	if len(l.Failures) > 0 {
		t.Fatalf("load: %v", l.Failures)
	}
	for _, st := range l.Status {
		if st.Tool == nil {
			continue
		}
		if err := ts.Add(st.Tool); err != nil {
			t.Fatal(err)
		}
	}
	return ts, l
}

func call(t *testing.T, ts *toolset.Toolset, name, args string) toolset.Result {
	t.Helper()
	return ts.Handle(context.Background(), providers.ToolCall{ID: "call_" + name, Name: name, Arguments: args}).Result()
}

// result waits, within bound, for a pending call.
func result(t *testing.T, p *toolset.Pending, what string) toolset.Result {
	t.Helper()
	select {
	case <-p.Done():
		return p.Result()
	case <-time.After(bound):
		t.Fatalf("%s did not return", what)
		return toolset.Result{}
	}
}

func TestLoadStatusesAndFailures(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	_, l := load(t, spec(cc, "Whoami", "Skipped"), spec(echo))
	var rows []string
	for _, st := range l.Status {
		rows = append(rows, st.Name+"="+st.Status+":"+st.Reason)
	}
	if got, want := strings.Join(rows, ", "), "Whoami=loaded:, Skipped=skipped:nothing to do here, Echo=loaded:"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	if len(l.Plugins) != 2 || l.Plugins[0].Name() != "capcheck" || l.Plugins[0].Current() == nil {
		t.Fatalf("plugins %+v", l.Plugins)
	}

	old := build(t, "host/testdata/plugins/oldtag")
	bad := plugin.Load(context.Background(), []plugin.Spec{spec("/bin/true"), spec(old), spec(echo, "Nope"), spec(cc, "Broken")}, plugin.Options{})
	defer bad.Close()
	want := []string{
		"plugin true: /bin/true is not a kosong plugin: it exited before the plugin handshake",
		"plugin oldtag: " + old + " is a kosong plugin that failed to declare its tools: tool Greet: parameters type main.greetParams: " +
			`tag must not begin with 'WORD=': "description=Who to greet."`,
		"echo:Nope (plugin echo has no tool Nope; it offers Echo)",
		"capcheck:Broken (database is unreachable)",
	}
	// capcheck started and loaded, one of its tools failing: it stays for
	// Close, the others did not start or had nothing to load.
	if len(bad.Failures) != len(want) || len(bad.Plugins) != 1 {
		t.Fatalf("failures %q, plugins %d", bad.Failures, len(bad.Plugins))
	}
	for i, w := range want {
		if bad.Failures[i] != w {
			t.Errorf("failure %d: %q, want %q", i, bad.Failures[i], w)
		}
	}
}

// A plugin's tools carry the annotations its Describe declares; a tool
// declaring none has every one unknown.
func TestToolAnnotations(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	ts, _ := load(t, spec(cc, "Whoami"), spec(echo))
	find := func(name string) toolset.Annotations {
		tl, ok := ts.Find(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		return toolset.AnnotationsOf(tl)
	}
	if a := find("Echo"); !a.IsReadOnly() || a.OpenWorld == nil || *a.OpenWorld || a.Destructive == nil || *a.Destructive || a.Idempotent != nil {
		t.Errorf("Echo: %+v, want read-only, not destructive, closed-world, idempotent unknown", a)
	}
	if a := find("Whoami"); a != (toolset.Annotations{}) {
		t.Errorf("Whoami declares none, got %+v", a)
	}
}
