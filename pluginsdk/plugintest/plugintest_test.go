package plugintest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
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
	d, err := g.approval.Request(ctx, "greet", "Greet "+p.Name)
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

func defs() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[greetParams]("Greet", "Greets.", newGreeter),
		pluginsdk.NewTool[noParams]("Skipped", "Never loads.", skipped),
		pluginsdk.NewTool[noParams]("WrappedSkip", "Never loads.", wrappedSkip),
		pluginsdk.NewTool[noParams]("Broken", "Fails to construct.", broken),
		pluginsdk.NewRawTool("Raw", "Untyped.", []byte(`{"type":"object"}`), configured),
	}
}

func TestLoadOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		opts   plugintest.Options
		tool   string
		status pluginv1.ToolLoad_Status
		reason string
	}{
		{"typed tool with capabilities", plugintest.Options{}, "Greet", pluginv1.ToolLoad_STATUS_LOADED, ""},
		{"skip with reason", plugintest.Options{}, "Skipped", pluginv1.ToolLoad_STATUS_SKIPPED, "no service configured"},
		{"wrapped SkipThisTool", plugintest.Options{}, "WrappedSkip", pluginv1.ToolLoad_STATUS_SKIPPED, ""},
		{"constructor error", plugintest.Options{}, "Broken", pluginv1.ToolLoad_STATUS_FAILED, "cannot open database"},
		{"missing capability", plugintest.Options{Capabilities: []string{pluginsdk.CapEnvironment}}, "Greet",
			pluginv1.ToolLoad_STATUS_FAILED, "Tool dependency not found: pluginsdk.Approval"},
		{"unknown tool", plugintest.Options{Tools: []string{"Nope"}}, "Nope", pluginv1.ToolLoad_STATUS_FAILED, `the plugin has no tool "Nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.New(t, tt.opts, defs()...)
			got := h.Loads[tt.tool]
			if got.GetStatus() != tt.status || got.GetReason() != tt.reason {
				t.Fatalf("load %s = %v %q, want %v %q", tt.tool, got.GetStatus(), got.GetReason(), tt.status, tt.reason)
			}
		})
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
		{"not loaded", nil, "Skipped", `{}`, pluginsdk.KindError, "", "tool Skipped is not loaded in this plugin", ""},
		{"raw tool with config", nil, "Raw", `{"a":1}`, pluginsdk.KindOk, `hello {"a":1}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.New(t, plugintest.Options{WorkDir: work, Approver: tt.approver,
				Configs: map[string]string{"Raw": `{"greeting":"hello "}`}}, defs()...)
			got := h.Call(t, tt.tool, tt.args)
			if got.Kind != tt.kind || got.Output != tt.output || got.Message != tt.message || got.Feedback != tt.feedback {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestApprovalCarriesCallID(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, defs()...)
	h.Call(t, "Greet", `{"name":"ann"}`)
	got := h.Approvals()
	if len(got) != 1 || got[0].ToolCallID != "call_1" || got[0].ToolName != "Greet" || got[0].Action != "greet" {
		t.Fatalf("approvals = %+v", got)
	}
}

func TestDescribe(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, defs()...)
	specs := h.Describe(t)
	if len(specs) != 5 || specs[0].GetName() != "Greet" {
		t.Fatalf("describe = %v", specs)
	}
	if caps := specs[0].GetCapabilities(); len(caps) != 2 || caps[0] != "Approval" || caps[1] != "Environment" {
		t.Fatalf("capabilities = %v", caps)
	}
	if !strings.Contains(specs[0].GetParametersSchema(), `"default":2`) {
		t.Fatalf("schema = %s", specs[0].GetParametersSchema())
	}
}
