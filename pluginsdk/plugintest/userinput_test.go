package plugintest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type askParams struct {
	Q string `json:"q"`
}

func askTool() pluginsdk.Definition {
	return pluginsdk.NewTool[askParams]("Ask", "asks", func(in pluginsdk.UserInput) pluginsdk.Handler[askParams] {
		return pluginsdk.HandlerFunc[askParams](func(ctx context.Context, p askParams) pluginsdk.Result {
			a, err := in.Ask(ctx, []pluginsdk.Question{{Question: p.Q, Header: "H",
				Options: []pluginsdk.QuestionOption{{Label: "a"}, {Label: "b"}}}})
			if err != nil {
				return pluginsdk.Error(err.Error())
			}
			return pluginsdk.Ok(a.Answers[p.Q])
		})
	})
}

func modelTool() pluginsdk.Definition {
	return pluginsdk.NewTool[askParams]("Media", "media", func(m pluginsdk.Model) (pluginsdk.Handler[askParams], error) {
		if m.CapabilitiesKnown() && !m.Has(pluginsdk.ModelImageIn) {
			return nil, pluginsdk.Skip("no image input")
		}
		return pluginsdk.HandlerFunc[askParams](func(context.Context, askParams) pluginsdk.Result {
			return pluginsdk.Ok(m.Name())
		}), nil
	})
}

func approvalTool() pluginsdk.Definition {
	return pluginsdk.NewTool[askParams]("Approve", "approves", func(pluginsdk.Approval) pluginsdk.Handler[askParams] {
		return pluginsdk.HandlerFunc[askParams](func(context.Context, askParams) pluginsdk.Result { return pluginsdk.Ok("") })
	})
}

// A capability the host rightly may not offer (UserInput, Model) skips the
// tool with a reason; a missing core capability is still a failure.
func TestMissingCapabilitySkipsOrFails(t *testing.T) {
	tests := []struct {
		name       string
		opts       plugintest.Options
		def        pluginsdk.Definition
		want       plugintest.Status
		wantReason string
	}{
		{"no UserInput", plugintest.Options{}, askTool(), plugintest.Skipped, "no one can answer questions"},
		{"UserInput", plugintest.Options{Answerer: func([]pluginsdk.Question) pluginsdk.Answers { return pluginsdk.Answers{} }},
			askTool(), plugintest.Loaded, ""},
		{"no Model", plugintest.Options{}, modelTool(), plugintest.Skipped, "does not say which model"},
		{"text-only model", plugintest.Options{Model: &plugintest.ModelInfo{Name: "m", CapabilitiesKnown: true,
			Capabilities: []string{"thinking"}}}, modelTool(), plugintest.Skipped, "no image input"},
		{"image model", plugintest.Options{Model: &plugintest.ModelInfo{Name: "m", CapabilitiesKnown: true,
			Capabilities: []string{"image_in"}}}, modelTool(), plugintest.Loaded, ""},
		{"no Approval", plugintest.Options{Capabilities: []string{plugintest.Session}}, approvalTool(), plugintest.Failed,
			"Tool dependency not found: pluginsdk.Approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, loads := plugintest.Load(t, tt.opts, tt.def)
			if len(loads) != 1 || loads[0].Status != tt.want || !strings.Contains(loads[0].Reason, tt.wantReason) {
				t.Fatalf("loads = %+v, want %s with %q", loads, tt.want, tt.wantReason)
			}
		})
	}
}

func TestUserInputAnswers(t *testing.T) {
	var got []pluginsdk.Question
	h := plugintest.New(t, plugintest.Options{Answerer: func(qs []pluginsdk.Question) pluginsdk.Answers {
		got = qs
		return pluginsdk.Answers{Answers: map[string]string{qs[0].Question: "b"}}
	}}, askTool())
	r := h.MustCall(t, "Ask", `{"q":"which?"}`)
	if r.Kind != pluginsdk.KindOk || len(r.Output) != 1 || r.Output[0].Text != "b" {
		t.Fatalf("result = %+v", r)
	}
	if len(got) != 1 || got[0].Header != "H" || len(got[0].Options) != 2 || got[0].Options[1].Label != "b" {
		t.Fatalf("questions = %+v", got)
	}
}

// A host may offer capabilities the plugin's SDK does not know (as this
// host offers UserInput and Model to plugins built before them): they are
// ignored, and the tool loads.
func TestUnknownOfferedCapabilitiesIgnored(t *testing.T) {
	_, loads := plugintest.Load(t, plugintest.Options{Capabilities: []string{plugintest.Approval, "SomeFutureCapability"}}, approvalTool())
	if len(loads) != 1 || loads[0].Status != plugintest.Loaded {
		t.Fatalf("loads = %+v", loads)
	}
}
