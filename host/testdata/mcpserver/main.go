// Command mcpserver is the MCP server of the tests, built with the official
// go-sdk: over stdio by default, over streamable HTTP with -http ADDR (it
// then prints its URL on stdout), or over HTTP+SSE with -http ADDR -sse.
//
// Tools: echo, add, slow (progress notifications; cancellable), fail
// (isError), crash (exits the process), cancelled (waits until a call of
// slow was cancelled), env (environment and working directory), media
// (every content type), big (long text), spawn (starts a child process),
// retool (adds and removes tools, so the server sends tools/list_changed),
// pid (the server's process id), freeze (the server stops reading its
// stdin, ignores SIGTERM and never answers again), bigimage (two images of
// MB megabytes), tasky (requires task augmentation, with -tasks), write
// (text to a file, with -write).
//
// -hang never answers; -exit exits at once with a message on stderr;
// -extra-tools FILE adds the tools FILE names (see retool) at start;
// -slow-start D waits D before serving. Over stdio: -noise prints lines
// that are not JSON on stdout (at start and before each message);
// -storm N sends each tools/list_changed N times; -exit-after-call stops
// reading stdin once it got a tool call, answers it and exits 300 ms
// later (what is sent to it meanwhile stays unread).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (print the URL on stdout)")
	sse := flag.Bool("sse", false, "with -http: serve the HTTP+SSE transport at /sse instead")
	hang := flag.Bool("hang", false, "never answer")
	extra := flag.String("extra-tools", "", "a file naming, one a line, tools to add that answer their names (read at start)")
	exit := flag.Bool("exit", false, "exit at once")
	tasks := flag.Bool("tasks", false, "mark the tool tasky as requiring task augmentation (execution.taskSupport: required)")
	slowStart := flag.Duration("slow-start", 0, "wait this long before serving")
	write := flag.Bool("write", false, "add the tool write (text to a file at path)")
	noise := flag.Bool("noise", false, "over stdio: print lines that are not JSON on stdout")
	storm := flag.Int("storm", 1, "over stdio: send each tools/list_changed this many times")
	exitAfterCall := flag.Bool("exit-after-call", false, "over stdio: stop reading at the first tool call, answer it, exit 300 ms later")
	flag.Parse()
	switch {
	case *exit:
		fmt.Fprintln(os.Stderr, "mcpserver: refusing to start (-exit)")
		os.Exit(1)
	case *hang:
		fmt.Fprintln(os.Stderr, "mcpserver: hanging (-hang)")
		select {}
	}

	time.Sleep(*slowStart)
	server := newServer()
	if *write {
		addWrite(server)
	}
	if *extra != "" {
		data, _ := os.ReadFile(*extra)
		for _, name := range strings.Fields(string(data)) {
			addNamed(server, name)
		}
	}
	if *httpAddr == "" {
		var out io.Writer = os.Stdout
		if *tasks {
			out = taskMarker{os.Stdout}
		}
		out = &watchedOut{w: out, noise: *noise, storm: *storm}
		stopAtCall.Store(*exitAfterCall)
		if *noise {
			fmt.Fprintln(os.Stdout, "mcpserver starting (not JSON)")
		}
		transport := &mcp.IOTransport{Reader: freezable{os.Stdin}, Writer: nopCloser{out}}
		if err := server.Run(context.Background(), transport); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	getServer := func(*http.Request) *mcp.Server { return server }
	if *sse {
		fmt.Printf("http://%s/sse\n", ln.Addr())
		log.Fatal(http.Serve(ln, mcp.NewSSEHandler(getServer, nil)))
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mcp.NewStreamableHTTPHandler(getServer, nil)))
}

// frozen, once set by freeze, stops the server reading its stdin.
var frozen atomic.Bool

// freezable reads stdin until the server is frozen; from then on a read
// never returns, and what it read is dropped.
type freezable struct{ r io.ReadCloser }

func (f freezable) Read(p []byte) (int, error) {
	if stopped.Load() {
		select {} // never read again (-exit-after-call)
	}
	n, err := f.r.Read(p)
	if stopAtCall.Load() && strings.Contains(string(p[:n]), `"tools/call"`) {
		stopped.Store(true)
	}
	if frozen.Load() {
		select {}
	}
	return n, err
}

func (f freezable) Close() error { return f.r.Close() }

type nopCloser struct{ io.Writer }

// taskMarker adds `"execution":{"taskSupport":"required"}` to the tool tasky
// in what the server writes (the go-sdk's Tool has no such field).
type taskMarker struct{ w io.Writer }

func (t taskMarker) Write(p []byte) (int, error) {
	q := strings.ReplaceAll(string(p), `"name":"tasky"`, `"execution":{"taskSupport":"required"},"name":"tasky"`)
	if _, err := io.WriteString(t.w, q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (nopCloser) Close() error { return nil }

// stopAtCall (-exit-after-call) has the server stop reading stdin once it
// read a tool call (stopped) and exit 300 ms after its answer.
var stopAtCall, stopped atomic.Bool

// listChanged is signalled each time a tools/list_changed was written.
var listChanged = make(chan struct{}, 1)

// watchedOut is the server's stdout: it adds noise, repeats list_changed
// (-storm) and signals listChanged.
type watchedOut struct {
	w     io.Writer
	noise bool
	storm int
	mu    sync.Mutex
}

func (o *watchedOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.noise {
		fmt.Fprint(o.w, "a log line, not JSON\n42\n{\"jsonrpc\": broken\n\n")
	}
	n := 1
	changed := strings.Contains(string(p), `"notifications/tools/list_changed"`)
	if changed && o.storm > 1 {
		n = o.storm
	}
	for range n {
		if _, err := o.w.Write(p); err != nil {
			return 0, err
		}
	}
	if changed {
		select {
		case listChanged <- struct{}{}:
		default:
		}
	}
	if stopped.Load() && strings.Contains(string(p), `"result":`) {
		go func() {
			time.Sleep(300 * time.Millisecond)
			fmt.Fprintln(os.Stderr, "mcpserver: exiting after a call (-exit-after-call)")
			os.Exit(0)
		}()
	}
	return len(p), nil
}

// cancellation is closed when a call of slow is cancelled.
var (
	cancellation = make(chan struct{})
	cancelOnce   sync.Once
)

type retoolIn struct {
	Add    string `json:"add,omitempty"`
	Remove string `json:"remove,omitempty"`
	// FailList makes every later tools/list fail.
	FailList bool `json:"fail_list,omitempty"`
	// Wait answers only once tools/list_changed was written (over stdio).
	Wait bool `json:"wait,omitempty"`
}

// failList, once set, fails tools/list.
var failList atomic.Bool

type echoIn struct {
	Text string `json:"text"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type slowIn struct {
	Steps      int `json:"steps"`
	IntervalMS int `json:"interval_ms"`
}

type failIn struct {
	Message string `json:"message,omitempty"`
}

type envIn struct {
	Names []string `json:"names"`
}

type mbIn struct {
	MB int `json:"mb"`
}

type bigIn struct {
	Chars int `json:"chars"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// addWrite adds the tool write: text to the file at path.
func addWrite(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Write text to the file at path.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte(in.Text), 0o644); err != nil {
				return nil, nil, err
			}
			return text("wrote " + in.Path), nil, nil
		})
}

type writeIn struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// yes and no are the hints' pointed-to values.
var yes, no = true, false

// A 1x1 PNG.
var png = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// addNamed adds a tool that answers "I am NAME".
func addNamed(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Answer " + name + "."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return text("I am " + name), nil, nil
		})
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpserver", Version: "1.0.0"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && failList.Load() {
				return nil, errors.New("tools/list is broken (fail_list)")
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Take steps x interval_ms, notifying progress at the start and after each step."},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			notify := func(i int) {
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d of %d", i, in.Steps)})
				}
			}
			notify(0)
			for i := 1; i <= in.Steps; i++ {
				select {
				case <-ctx.Done():
					fmt.Fprintln(os.Stderr, "mcpserver: slow was cancelled")
					cancelOnce.Do(func() { close(cancellation) })
					return nil, nil, ctx.Err()
				case <-time.After(time.Duration(in.IntervalMS) * time.Millisecond):
				}
				notify(i)
			}
			return text(fmt.Sprintf("done after %d steps", in.Steps)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "Wait until a call of slow was cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			select {
			case <-cancellation:
				return text("slow was cancelled"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail with an isError result."},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
			r := text("failed: " + in.Message)
			r.IsError = true
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server process."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "mcpserver: crashing on purpose")
			os.Exit(3)
			return nil, nil, errors.New("unreachable")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Report environment variables, the working directory and the call's params._meta.traceparent."},
		func(_ context.Context, req *mcp.CallToolRequest, _ envIn) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			wd, _ := os.Getwd()
			fmt.Fprintf(&b, "cwd=%s\n", wd)
			if tp, ok := req.Params.GetMeta()["traceparent"].(string); ok {
				fmt.Fprintf(&b, "_meta.traceparent=%s\n", tp)
			}
			for _, kv := range os.Environ() {
				fmt.Fprintln(&b, kv)
			}
			return text(b.String()), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "media", Description: "Return every kind of content."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			size := int64(42)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "some text"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.AudioContent{Data: []byte("RIFF0000WAVE"), MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain", Description: "the report", Size: &size},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes", MIMEType: "text/markdown", Text: "# Notes"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://blob", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://pic", MIMEType: "image/png", Blob: png}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://log", MIMEType: "text/plain; charset=utf-8", Blob: []byte("line one\nline two")}},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "bigimage", Description: "Return two images of mb megabytes each."},
		func(_ context.Context, _ *mcp.CallToolRequest, in mbIn) (*mcp.CallToolResult, any, error) {
			data := make([]byte, in.MB<<20)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.ImageContent{Data: data, MIMEType: "image/png"},
				&mcp.ImageContent{Data: data, MIMEType: "image/png"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "tasky", Description: "A tool that requires task augmentation (with -tasks)."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return text("tasky ran"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return chars characters of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: strings.Repeat("x", in.Chars)},
				&mcp.TextContent{Text: "tail"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "retool", Description: "Add a tool that answers its own name, and remove a tool; the server then sends tools/list_changed."},
		func(_ context.Context, _ *mcp.CallToolRequest, in retoolIn) (*mcp.CallToolResult, any, error) {
			if in.FailList {
				failList.Store(true)
			}
			if in.Wait {
				select {
				case <-listChanged:
				default:
				}
			}
			if in.Add != "" {
				addNamed(s, in.Add)
			}
			if in.Remove != "" {
				s.RemoveTools(in.Remove)
			}
			if in.Wait {
				select {
				case <-listChanged:
				case <-time.After(30 * time.Second):
					return nil, nil, errors.New("tools/list_changed was not written within 30s")
				}
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Start a child process (sleep 300) and return its pid."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(fmt.Sprint(cmd.Process.Pid)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Return the server's process id."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "freeze", Description: "Stop reading stdin, ignore SIGTERM and never answer."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
			frozen.Store(true)
			fmt.Fprintln(os.Stderr, "mcpserver: frozen")
			select {}
		})
	return s
}
