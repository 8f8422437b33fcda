package plugintest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type greetParams struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty" default:"2" minimum:"1"`
}

type greeter struct {
	approval pluginsdk.Approval
	env      pluginsdk.Environment
}

func (g greeter) Call(ctx context.Context, p greetParams) pluginsdk.Result {
	if p.Name == "panic" {
		panic("boom")
	}
	d, err := g.approval.Request(ctx, "greet", "Greet "+p.Name, pluginsdk.DisplayBlock{Kind: "brief", Data: p.Name})
	if err != nil {
		return pluginsdk.Error(err.Error())
	}
	if !d.Approved {
		return pluginsdk.Rejected(d.Feedback)
	}
	return pluginsdk.Ok(strings.Repeat("hi "+p.Name+" ", p.Times) + "from " + g.env.WorkDir()).
		WithMessage("id " + pluginsdk.ToolCallID(ctx))
}

func newGreeter(a pluginsdk.Approval, env pluginsdk.Environment) (greeter, error) {
	return greeter{approval: a, env: env}, nil
}

type noParams struct{}

func skipped() (pluginsdk.HandlerFunc[noParams], error) {
	return nil, pluginsdk.Skip("no service configured")
}

func wrappedSkip() (pluginsdk.HandlerFunc[noParams], error) {
	return nil, errors.Join(pluginsdk.SkipThisTool)
}

func broken(pluginsdk.Session) (pluginsdk.HandlerFunc[noParams], error) {
	return nil, errors.New("cannot open database")
}

func configured(c pluginsdk.Config) (pluginsdk.RawHandlerFunc, error) {
	var cfg struct{ Greeting string }
	if err := c.Decode(&cfg); err != nil {
		return nil, err
	}
	return func(ctx context.Context, args json.RawMessage) pluginsdk.Result {
		return pluginsdk.Ok(cfg.Greeting + string(args))
	}, nil
}

func waiter() (pluginsdk.HandlerFunc[noParams], error) {
	return func(ctx context.Context, _ noParams) pluginsdk.Result {
		<-ctx.Done()
		return pluginsdk.Error("cancelled")
	}, nil
}

type stepsParams struct {
	Steps int `json:"steps"`
}

func stepper(p pluginsdk.Progress, logger hclog.Logger) (pluginsdk.HandlerFunc[stepsParams], error) {
	return func(ctx context.Context, s stepsParams) pluginsdk.Result {
		logger.Info("constructor logger")
		pluginsdk.Logger(ctx).Info("call logger")
		for i := range s.Steps {
			if err := p.Report(ctx, float64(i+1), float64(s.Steps), "step"); err != nil {
				return pluginsdk.Error(err.Error())
			}
		}
		return pluginsdk.Ok("done")
	}, nil
}

func picture() (pluginsdk.HandlerFunc[noParams], error) {
	return func(context.Context, noParams) pluginsdk.Result {
		return pluginsdk.OkParts(pluginsdk.TextPart("a picture"), pluginsdk.Part{MimeType: "image/png", Data: []byte{1, 2}}).
			WithDisplay(pluginsdk.Diff("a.txt", "x", "y"))
	}, nil
}

func loadable() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[greetParams]("Greet", "Greets.", newGreeter),
		pluginsdk.NewRawTool("Raw", "Untyped.", []byte(`{"type":"object"}`), configured),
		pluginsdk.NewTool[noParams]("Wait", "Waits for cancellation.", waiter),
		pluginsdk.NewTool[stepsParams]("Steps", "Reports progress.", stepper),
		pluginsdk.NewTool[noParams]("Picture", "Returns an image.", picture),
	}
}

func all() []pluginsdk.Definition {
	return append(loadable(),
		pluginsdk.NewTool[noParams]("Skipped", "Never loads.", skipped),
		pluginsdk.NewTool[noParams]("WrappedSkip", "Never loads.", wrappedSkip),
		pluginsdk.NewTool[noParams]("Broken", "Fails to construct.", broken),
	)
}

func TestLoadOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		opts   plugintest.Options
		tool   string
		status plugintest.Status
		reason string
	}{
		{"typed tool with capabilities", plugintest.Options{}, "Greet", plugintest.Loaded, ""},
		{"skip with reason", plugintest.Options{}, "Skipped", plugintest.Skipped, "no service configured"},
		{"wrapped SkipThisTool", plugintest.Options{}, "WrappedSkip", plugintest.Skipped, ""},
		{"constructor error", plugintest.Options{}, "Broken", plugintest.Failed, "cannot open database"},
		{"missing capability", plugintest.Options{Capabilities: []string{plugintest.Environment}}, "Greet",
			plugintest.Failed, "Tool dependency not found: pluginsdk.Approval"},
		{"progress not offered still loads", plugintest.Options{Capabilities: []string{}}, "Steps", plugintest.Loaded, ""},
		{"unknown tool", plugintest.Options{Tools: []string{"Nope"}}, "Nope", plugintest.Failed, `the plugin has no tool "Nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, loads := plugintest.Load(t, tt.opts, all()...)
			for _, l := range loads {
				if l.Name == tt.tool {
					if l.Status != tt.status || l.Reason != tt.reason {
						t.Fatalf("load %s = %v %q, want %v %q", tt.tool, l.Status, l.Reason, tt.status, tt.reason)
					}
					return
				}
			}
			t.Fatalf("no load outcome for %s in %+v", tt.tool, loads)
		})
	}
}

// fatalTB records the first fatal failure of a test helper.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = strings.TrimSpace(fmt.Sprintf(format, args...))
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fatalTB) Fatal(args ...any) { f.Fatalf("%s", strings.TrimSpace(fmt.Sprintln(args...))) }

// fatalOf runs fn with a TB whose Fatal ends fn, and returns the message.
func fatalOf(t *testing.T, fn func(tb testing.TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.msg
}

func TestNewFails(t *testing.T) {
	tests := []struct {
		name string
		defs []pluginsdk.Definition
		want string
	}{
		{"a tool fails to load", []pluginsdk.Definition{loadable()[0], pluginsdk.NewTool[noParams]("Broken", "Fails.", broken)},
			"plugintest: tool Broken failed: cannot open database"},
		{"a tool is skipped", []pluginsdk.Definition{pluginsdk.NewTool[noParams]("Skipped", "Never loads.", skipped)},
			"plugintest: tool Skipped skipped: no service configured (use plugintest.Load"},
		{"a constructor of the wrong shape", []pluginsdk.Definition{pluginsdk.NewTool[noParams]("Bad", "Bad.", func(int) (pluginsdk.HandlerFunc[noParams], error) {
			return nil, nil
		})}, "plugintest: tool Bad: constructor parameter 1 is int, which the host cannot provide; want func(...) (H, error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := fatalOf(t, func(tb testing.TB) { plugintest.New(tb, plugintest.Options{}, tt.defs...) })
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("New failed with %q, want %q", msg, tt.want)
			}
		})
	}
	if msg := fatalOf(t, func(tb testing.TB) { plugintest.New(tb, plugintest.Options{}, loadable()...) }); msg != "" {
		t.Fatalf("New failed with loadable tools: %s", msg)
	}
}

func TestCalls(t *testing.T) {
	work := t.TempDir()
	tests := []struct {
		name     string
		approver plugintest.Approver
		tool     string
		args     string
		kind     pluginsdk.ResultKind
		output   string
		message  string
		feedback string
	}{
		{"defaults applied, capabilities over the broker", nil, "Greet", `{"name":"ann"}`, pluginsdk.KindOk,
			"hi ann hi ann from " + work, "id call_1", ""},
		{"explicit argument", nil, "Greet", `{"name":"bo","times":1}`, pluginsdk.KindOk, "hi bo from " + work, "id call_1", ""},
		{"rejected with feedback", plugintest.RejectAll("not now"), "Greet", `{"name":"x"}`, pluginsdk.KindRejected, "", "", "not now"},
		{"panic becomes a runtime error", nil, "Greet", `{"name":"panic"}`, pluginsdk.KindError, "", "tool Greet panicked: boom", ""},
		{"not loaded", nil, "Nope", `{}`, pluginsdk.KindError, "", "tool Nope is not loaded in this plugin", ""},
		{"raw tool with config", nil, "Raw", `{"a":1}`, pluginsdk.KindOk, `hello {"a":1}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.New(t, plugintest.Options{WorkDir: work, Approver: tt.approver,
				Configs: map[string]string{"Raw": `{"greeting":"hello "}`}}, loadable()...)
			got := h.MustCall(t, tt.tool, tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || got.Message != tt.message || got.Feedback != tt.feedback {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestCallEndsWithItsContext(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, loadable()...)
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := h.Call(ctx, "Wait", `{}`)
			errc <- err
		}()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := h.Call(ctx, "Wait", `{}`); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestImagesAndDisplayAsSDKValues(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, loadable()...)
	got := h.MustCall(t, "Picture", `{}`)
	if len(got.Output) != 2 || got.Output[0].Text != "a picture" || !got.Output[1].IsImage() ||
		got.Output[1].MimeType != "image/png" || !bytes.Equal(got.Output[1].Data, []byte{1, 2}) {
		t.Fatalf("output = %+v", got.Output)
	}
	if len(got.Display) != 1 || got.Display[0].Kind != "diff" {
		t.Fatalf("display = %+v", got.Display)
	}
	var d pluginsdk.DiffBlock
	if err := json.Unmarshal(got.Display[0].Data.(json.RawMessage), &d); err != nil || d.Path != "a.txt" || d.NewText != "y" {
		t.Fatalf("diff = %+v (%v)", d, err)
	}
}

func TestApprovalCarriesCallID(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, loadable()...)
	h.MustCall(t, "Greet", `{"name":"ann"}`)
	got := h.Approvals()
	if len(got) != 1 || got[0].ToolCallID != "call_1" || got[0].ToolName != "Greet" || got[0].Action != "greet" {
		t.Fatalf("approvals = %+v", got)
	}
	if len(got[0].Display) != 1 || string(got[0].Display[0].Data.(json.RawMessage)) != `"ann"` {
		t.Fatalf("approval display = %+v", got[0].Display)
	}
}

func TestProgressAndLogger(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := hclog.New(&hclog.LoggerOptions{Output: &lockedWriter{mu: &mu, w: &logs}, JSONFormat: true})
	var seen []plugintest.ProgressReport
	h := plugintest.New(t, plugintest.Options{Logger: logger, OnProgress: func(p plugintest.ProgressReport) {
		seen = append(seen, p)
	}}, loadable()...)
	if got := h.MustCall(t, "Steps", `{"steps": 3}`); got.Kind != pluginsdk.KindOk {
		t.Fatalf("got %+v", got)
	}
	want := []plugintest.ProgressReport{
		{ToolCallID: "call_1", ToolName: "Steps", Done: 1, Total: 3, Message: "step"},
		{ToolCallID: "call_1", ToolName: "Steps", Done: 2, Total: 3, Message: "step"},
		{ToolCallID: "call_1", ToolName: "Steps", Done: 3, Total: 3, Message: "step"},
	}
	if got := h.Progress(); len(got) != 3 || got[0] != want[0] || got[2] != want[2] || len(seen) != 3 {
		t.Fatalf("progress = %+v, seen %+v", got, seen)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if !strings.Contains(out, `"@message":"constructor logger"`) || !strings.Contains(out, `"@module":"Steps"`) {
		t.Fatalf("constructor logger lines: %s", out)
	}
	if !strings.Contains(out, `"@message":"call logger"`) || !strings.Contains(out, `"tool_call_id":"call_1"`) {
		t.Fatalf("call logger lines: %s", out)
	}

	t.Run("not offered: reports are dropped", func(t *testing.T) {
		h := plugintest.New(t, plugintest.Options{Capabilities: []string{}, Tools: []string{"Steps"}}, loadable()...)
		if got := h.MustCall(t, "Steps", `{"steps": 2}`); got.Kind != pluginsdk.KindOk || len(h.Progress()) != 0 {
			t.Fatalf("got %+v, progress %+v", got, h.Progress())
		}
	})
}

func TestLoggerOutsideACall(t *testing.T) {
	// Outside a call the logger discards; it must not be nil.
	pluginsdk.Logger(context.Background()).Info("nobody hears this")
}

func TestDescribe(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, loadable()...)
	specs := h.Describe(t)
	if len(specs) != 5 || specs[0].Name != "Greet" {
		t.Fatalf("describe = %v", specs)
	}
	if caps := specs[0].Capabilities; len(caps) != 2 || caps[0] != "Approval" || caps[1] != "Environment" {
		t.Fatalf("capabilities = %v", caps)
	}
	// The logger is no host capability.
	if caps := specs[3].Capabilities; len(caps) != 1 || caps[0] != "Progress" {
		t.Fatalf("Steps capabilities = %v", caps)
	}
	if !strings.Contains(string(specs[0].Schema), `"default":2`) {
		t.Fatalf("schema = %s", specs[0].Schema)
	}
}

// The annotations a tool declares reach the host; a tool declaring none has
// every one unknown.
func TestDescribeAnnotations(t *testing.T) {
	noop := func() (pluginsdk.RawHandlerFunc, error) {
		return func(context.Context, json.RawMessage) pluginsdk.Result { return pluginsdk.Ok("") }, nil
	}
	schema := json.RawMessage(`{"type":"object"}`)
	h := plugintest.New(t, plugintest.Options{},
		pluginsdk.NewRawTool("Look", "d", schema, noop, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld()),
		pluginsdk.NewRawTool("Wipe", "d", schema, noop, pluginsdk.Destructive(), pluginsdk.Idempotent(), pluginsdk.OpenWorld()),
		pluginsdk.NewRawTool("Plain", "d", schema, noop),
	)
	str := func(b *bool) string {
		if b == nil {
			return "?"
		}
		return fmt.Sprint(*b)
	}
	got := map[string]string{}
	for _, s := range h.Describe(t) {
		a := s.Annotations
		got[s.Name] = strings.Join([]string{str(a.ReadOnly), str(a.Destructive), str(a.Idempotent), str(a.OpenWorld)}, " ")
	}
	want := map[string]string{"Look": "true false ? false", "Wipe": "false true true true", "Plain": "? ? ? ?"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: read-only destructive idempotent open-world = %s, want %s", name, got[name], w)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
