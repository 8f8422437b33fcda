//go:build unix

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
	"github.com/kosong-host/kosong-host/providers"
)

const calls = 10000

func TestMain(m *testing.M) {
	if serveChild() {
		return
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func echoAgent(b *testing.B) (string, string) {
	echo, err := testbin.Build("plugins/echo/cmd/kosong-plugin-echo", "plugins/kosong-plugin-echo")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "s.md"), []byte("x"), 0o644)
	path := filepath.Join(dir, "agent.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("version: 1\nagent:\n  name: b\n  system_prompt_path: ./s.md\n  tools: [%q]\n", echo)), 0o644)
	return path, echo
}

// BenchmarkEchoRoundTrip: Handle -> Echo plugin -> result, 10,000 sequential
// calls, beside the same Echo in-process, a direct call through the
// plugin's wire client on the same go-plugin connection (the Calls stream,
// no host work), and bare gRPC over a unix socket.
func BenchmarkEchoRoundTrip(b *testing.B) {
	path, _ := echoAgent(b)
	ctx := context.Background()
	a, err := agent.Load(ctx, path, agent.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Yolo{}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()

	measure := func(fn func(i int)) (time.Duration, time.Duration) {
		for i := range 200 { // warm up
			fn(i)
		}
		d := make([]time.Duration, calls)
		for i := range calls {
			start := time.Now()
			fn(i)
			d[i] = time.Since(start)
		}
		return percentiles(d)
	}
	b.ResetTimer()
	handleP50, handleP99 := measure(func(i int) {
		r := a.Toolset.Handle(ctx, providers.ToolCall{ID: "c", Name: "Echo", Arguments: `{"text":"hello"}`}).Result()
		if r.IsError() {
			b.Fatal(r.Message)
		}
	})
	// The go-plugin call and the bare gRPC calls are what the 5 % target
	// compares: they are measured call by call in turn, so that the drift of
	// a shared machine hits them alike.
	cur := a.Plugins[0].Current()
	transports := measureInterleaved(
		func() {
			if _, err := cur.Call(ctx, pluginrpc.CallRequest{ToolCallID: "c", ToolName: "Echo", Arguments: json.RawMessage(`{"text":"hello"}`)}); err != nil {
				b.Fatal(err)
			}
		},
		bareGRPC(b, true, true), bareGRPC(b, true, false), bareGRPC(b, false, false))
	directP50, directP99 := transports[0][0], transports[0][1]
	sdkP50, sdkP99 := transports[1][0], transports[1][1]
	bareTLSP50, bareTLSP99 := transports[2][0], transports[2][1]
	bareP50, bareP99 := transports[3][0], transports[3][1]
	inP50, inP99 := measure(func(int) {
		var p struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(`{"text":"hello"}`), &p); err != nil {
			b.Fatal(err)
		}
		_ = pluginsdk.Ok(p.Text)
	})
	echoSpec := a.Toolset.Tools()[0]
	local := toolset.New(nil)
	if err := local.Add(nopTool{spec: toolset.Spec{Name: "Echo", Parameters: echoSpec.Parameters}}); err != nil {
		b.Fatal(err)
	}
	hostP50, hostP99 := measure(func(int) {
		local.Handle(ctx, providers.ToolCall{ID: "c", Name: "Echo", Arguments: `{"text":"hello"}`}).Result()
	})
	b.StopTimer()

	b.ReportMetric(us(handleP50), "handle-p50-us")
	b.ReportMetric(us(handleP99), "handle-p99-us")
	b.ReportMetric(us(directP50), "goplugin-p50-us")
	b.ReportMetric(us(bareP50), "bare-grpc-p50-us")
	b.ReportMetric(us(inP50), "inproc-p50-us")
	b.ReportMetric(us(hostP50), "host-work-p50-us")
	b.ReportMetric(float64(directP50)/float64(sdkP50), "goplugin/sdk-grpc")
	b.ReportMetric(float64(directP50)/float64(bareTLSP50), "goplugin/bare-mtls")
	report(b, "echo round trip over %d sequential calls (p50 / p99):", calls)
	report(b, "  Handle -> plugin -> result               : %8.1f / %8.1f us", us(handleP50), us(handleP99))
	report(b, "  go-plugin gRPC call (mTLS)               : %8.1f / %8.1f us", us(directP50), us(directP99))
	report(b, "  the same SDK server, bare gRPC, mTLS     : %8.1f / %8.1f us", us(sdkP50), us(sdkP99))
	report(b, "  bare gRPC echo of the arguments, mTLS    : %8.1f / %8.1f us", us(bareTLSP50), us(bareTLSP99))
	report(b, "  bare gRPC echo of the arguments, no TLS  : %8.1f / %8.1f us", us(bareP50), us(bareP99))
	report(b, "  in-process                               : %8.2f / %8.2f us", us(inP50), us(inP99))
	report(b, "  (the four gRPC figures are measured in turns of 100 calls)")
	report(b, "  host's own work per call (Handle with an in-process no-op tool): %.1f / %.1f us (target p50 < 10 us)", us(hostP50), us(hostP99))
	report(b, "  go-plugin / the same SDK server over bare gRPC, same mTLS: %.2f (target: within 1.05)", float64(directP50)/float64(sdkP50))
	report(b, "  ratios: Handle/in-process %.0fx, Handle/go-plugin call %.2f, go-plugin+SDK/bare echo %.2f, mTLS/no TLS %.2f",
		float64(handleP50)/float64(inP50), float64(handleP50)/float64(directP50), float64(directP50)/float64(bareTLSP50), float64(bareTLSP50)/float64(bareP50))
}

// measureInterleaved times calls of each fn in blocks of 100, one block of
// each in turn (after a warm-up), and returns the p50 and p99 of each. A
// block keeps its process's caches warm; taking turns spreads the drift of a
// shared machine over all alike.
func measureInterleaved(fns ...func()) [][2]time.Duration {
	const block = 100
	for _, fn := range fns {
		for range 200 {
			fn()
		}
	}
	d := make([][]time.Duration, len(fns))
	for i := range d {
		d[i] = make([]time.Duration, 0, calls)
	}
	for range calls / block {
		for j, fn := range fns {
			for range block {
				start := time.Now()
				fn()
				d[j] = append(d[j], time.Since(start))
			}
		}
	}
	out := make([][2]time.Duration, len(fns))
	for j := range d {
		out[j][0], out[j][1] = percentiles(d[j])
	}
	return out
}

// bareGRPC starts a gRPC echo served without go-plugin by another process
// over a unix socket, with the plugins' mutual TLS or without TLS: what
// go-plugin is compared with. With sdk the service is pluginsdk's own with
// an Echo tool like the echo plugin's; else Call echoes its arguments. It
// returns one call; the process ends with the benchmark.
func bareGRPC(b *testing.B, withTLS, sdk bool) func() {
	bin, err := testbin.Build("host/testdata/plugins/bareecho", "bareecho")
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(b.TempDir(), "echo.sock")
	cmd := exec.Command(bin, sock)
	if sdk {
		cmd.Args = append(cmd.Args, "sdk")
	}
	creds := insecure.NewCredentials()
	if withTLS {
		hostCfg, bundle, err := plugin.NewTLS("bareecho")
		if err != nil {
			b.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		data, _ := json.Marshal(bundle)
		w.Write(data)
		w.Close()
		b.Cleanup(func() { r.Close() })
		cmd.ExtraFiles = []*os.File{r}
		cmd.Env = append(os.Environ(), pluginrpc.TLSFDEnv+"=3")
		creds = credentials.NewTLS(hostCfg)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("bareecho: %q %v", line, err)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	c := pluginv1.NewPluginClient(conn)
	ctx := context.Background()
	if sdk {
		if _, err := c.Load(ctx, &pluginv1.LoadRequest{}); err != nil {
			b.Fatal(err)
		}
	}
	return func() {
		if _, err := c.Call(ctx, &pluginv1.CallRequest{ToolCallId: "c", ToolName: "Echo", Arguments: `{"text":"hello"}`}); err != nil {
			b.Fatal(err)
		}
	}
}

// nopTool answers at once: Handle with it measures the host's own work per
// call (validation, bookkeeping, hand-off), without any transport.
type nopTool struct{ spec toolset.Spec }

func (t nopTool) Spec() toolset.Spec { return t.spec }
func (t nopTool) Call(context.Context, string, json.RawMessage) toolset.Result {
	return toolset.Result{Output: []providers.ContentPart{providers.TextPart("hello")}}
}

// cpuTime is the CPU time used by this process and its waited-for children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// BenchmarkPluginStart: one plugin's start with and without mutual TLS, and
// the top-level agent.yaml (every plugin, in parallel) beside one alone.
func BenchmarkPluginStart(b *testing.B) {
	_, echo := echoAgent(b)
	const rounds = 20
	// Starts with and without TLS alternate, after a warm-up, so neither
	// gets the cold caches.
	var walls [2][]time.Duration
	var cpus [2]time.Duration
	for i := range 2*rounds + 4 {
		noTLS := i%2 == 1
		c0, t0 := cpuTime(), time.Now()
		p, err := plugin.Launch(context.Background(), plugin.Config{Name: "echo", Path: echo, NoTLS: noTLS})
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(t0)
		p.Kill()
		if i < 4 {
			continue
		}
		walls[i%2] = append(walls[i%2], wall)
		cpus[i%2] += cpuTime() - c0
	}
	tlsWall, _ := percentiles(walls[0])
	plainWall, _ := percentiles(walls[1])
	tlsCPU, plainCPU := cpus[0]/rounds, cpus[1]/rounds
	b.ResetTimer()

	// Every plugin of the repository: each started alone, then all launched
	// in parallel, then the top-level agent.yaml loaded (launch, capability
	// servers, Load).
	root := testbin.Root()
	entries, _ := os.ReadDir(filepath.Join(root, "plugins"))
	var bins []string
	for _, e := range entries {
		p, err := testbin.Build("plugins/"+e.Name()+"/cmd/kosong-plugin-"+e.Name(), "plugins/kosong-plugin-"+e.Name())
		if err != nil {
			b.Fatal(err)
		}
		bins = append(bins, p)
	}
	launch := func(path string) *plugin.Process {
		p, err := plugin.Launch(context.Background(), plugin.Config{Name: filepath.Base(path), Path: path})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	var sumAlone, cpuAlone time.Duration
	for _, bin := range bins {
		var walls []time.Duration
		c0 := cpuTime()
		for range 5 {
			t0 := time.Now()
			p := launch(bin)
			walls = append(walls, time.Since(t0))
			p.Kill()
		}
		cpuAlone += (cpuTime() - c0) / 5
		p50, _ := percentiles(walls)
		sumAlone += p50
	}
	var parWalls []time.Duration
	for range 5 {
		t0 := time.Now()
		ps := make([]*plugin.Process, len(bins))
		var wg sync.WaitGroup
		for i, bin := range bins {
			wg.Add(1)
			go func() { defer wg.Done(); ps[i] = launch(bin) }()
		}
		wg.Wait()
		parWalls = append(parWalls, time.Since(t0))
		for _, p := range ps {
			p.Kill()
		}
	}
	parWall, _ := percentiles(parWalls)

	pluginDir := filepath.Join(testbin.Dir(), "plugins")
	var agentWalls []time.Duration
	for range 5 {
		t0 := time.Now()
		a, err := agent.Load(context.Background(), filepath.Join(root, "agent.yaml"), agent.Options{
			PluginDirs: []string{pluginDir}, WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Deny{}})
		if err != nil {
			b.Fatal(err)
		}
		agentWalls = append(agentWalls, time.Since(t0))
		a.Close()
	}
	// The same agent.yaml from kosong-host's built-in plugins: each plugin
	// process is the host binary, run with `plugin-serve NAME`.
	host, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		b.Fatal(err)
	}
	builtins := map[string]agent.Builtin{}
	for _, e := range entries {
		builtins[e.Name()] = agent.Builtin{Path: host, Args: []string{"plugin-serve", e.Name()}}
	}
	var builtinWalls []time.Duration
	for range 5 {
		t0 := time.Now()
		a, err := agent.Load(context.Background(), filepath.Join(root, "agent.yaml"), agent.Options{
			Builtins: builtins, WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Deny{}})
		if err != nil {
			b.Fatal(err)
		}
		builtinWalls = append(builtinWalls, time.Since(t0))
		if !a.Status[0].Builtin {
			b.Fatalf("%s is not served by a built-in plugin: %s", a.Status[0].Name, a.Status[0].Source)
		}
		a.Close()
	}
	b.StopTimer()
	agentWall, _ := percentiles(agentWalls)
	builtinWall, _ := percentiles(builtinWalls)
	n, cores := len(bins), runtime.NumCPU()
	optimum := sumAlone / time.Duration(cores)
	b.ReportMetric(float64(tlsWall.Microseconds())/1e3, "start-mtls-ms")
	b.ReportMetric(float64(plainWall.Microseconds())/1e3, "start-plain-ms")
	b.ReportMetric(float64(tlsWall)/float64(plainWall), "mtls/plain")
	b.ReportMetric(float64(parWall)/float64(optimum), "parallel/optimum")
	b.ReportMetric(float64(agentWall.Microseconds())/1e3, "agent-load-ms")
	b.ReportMetric(float64(builtinWall.Microseconds())/1e3, "agent-load-builtin-ms")
	report(b, "plugin start (p50 of %d, wall / CPU of host+plugin):", rounds)
	report(b, "  one plugin, mutual TLS (P-256)  : %6.1f ms / %6.1f ms CPU", ms(tlsWall), ms(tlsCPU))
	report(b, "  one plugin, no TLS              : %6.1f ms / %6.1f ms CPU", ms(plainWall), ms(plainCPU))
	report(b, "  mTLS / no TLS: %.2fx (target <= 1.5x)", float64(tlsWall)/float64(plainWall))
	cpuOptimum := cpuAlone / time.Duration(cores)
	report(b, "  %d plugins launched in parallel: %.1f ms; each alone, summed: %.1f ms wall, %.1f ms CPU (host+plugin, start and stop)",
		n, ms(parWall), ms(sumAlone), ms(cpuAlone))
	report(b, "  optimum on %d cores: %.1f ms from wall times (ratio %.2f), %.1f ms from CPU times (ratio %.2f); target <= 1.2",
		cores, ms(optimum), float64(parWall)/float64(optimum), ms(cpuOptimum), float64(parWall)/float64(cpuOptimum))
	report(b, "  top-level agent.yaml loaded (launch + capabilities + Load of %d tools plugins): %.1f ms", n, ms(agentWall))
	report(b, "  the same from kosong-host's built-in plugins (%d processes of the host binary): %.1f ms", n, ms(builtinWall))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// BenchmarkCancel: from cancelling a call in the host to the tool seeing
// its context cancelled inside the plugin (the plugin writes the moment
// down; the clock is the same machine's).
func BenchmarkCancel(b *testing.B) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "s.md"), []byte("x"), 0o644)
	path := filepath.Join(dir, "agent.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf("version: 1\nagent:\n  name: b\n  system_prompt_path: ./s.md\n  tools: [%q]\n", cc+":Linger")), 0o644)
	state := b.TempDir()
	a, err := agent.Load(context.Background(), path, agent.Options{WorkDir: dir, StateDir: state, Decider: approval.Yolo{}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	const n = 200
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		ctx, cancel := context.WithCancel(context.Background())
		p := a.Toolset.Handle(ctx, providers.ToolCall{ID: id, Name: "Linger", Arguments: "{}"})
		pluginState := filepath.Join(state, "plugins", "capcheck")
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if _, err := os.Stat(filepath.Join(pluginState, "started-"+id)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("call %s never started", id)
			}
		}
		t0 := time.Now()
		cancel()
		p.Result()
		file := filepath.Join(pluginState, "cancelled-"+id)
		var raw []byte
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if raw, err = os.ReadFile(file); err == nil && len(raw) > 0 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the plugin never saw the cancellation of %s", id)
			}
		}
		seen, _ := strconv.ParseInt(string(raw), 10, 64)
		lat = append(lat, time.Unix(0, seen).Sub(t0))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	slices.Sort(lat)
	b.ReportMetric(us(p50), "cancel-p50-us")
	b.ReportMetric(us(lat[len(lat)-1]), "cancel-max-us")
	report(b, "cancel in the host -> the tool's context done in the plugin, %d calls: p50 %.0f us, p99 %.0f us, max %.0f us (target < 1 s)",
		n, us(p50), us(p99), us(lat[len(lat)-1]))
}
