package pluginrpc

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

func TestConvertersRoundTrip(t *testing.T) {
	desc := Description{SDKVersion: "1.2.3", Tools: []ToolSpec{{Name: "A", Description: "d", ParametersSchema: json.RawMessage(`{"type":"object"}`),
		Capabilities: []string{CapApproval, CapProgress}, DefaultTimeout: 90 * time.Second}}}
	if got := fromProtoDescription(toProtoDescription(desc)); !reflect.DeepEqual(got, desc) {
		t.Errorf("description: %+v", got)
	}
	yes, no := true, false
	annotated := Description{Tools: []ToolSpec{
		{Name: "R", ParametersSchema: json.RawMessage(`{}`), Annotations: Annotations{ReadOnly: &yes, OpenWorld: &no}},
		{Name: "W", ParametersSchema: json.RawMessage(`{}`), Annotations: Annotations{Destructive: &yes, Idempotent: &no, OpenWorld: &yes}},
	}}
	if got := fromProtoDescription(toProtoDescription(annotated)); !reflect.DeepEqual(got, annotated) {
		t.Errorf("annotations: %+v", got)
	}
	// A binary built before annotations sends none: every one is unknown.
	if got := fromProtoToolSpec(&pluginv1.ToolSpec{Name: "Old"}); got.Annotations.Known() {
		t.Errorf("an old tool's annotations: %+v", got.Annotations)
	}
	// A hint value added after this version is unknown too.
	if got := fromProtoAnnotations(&pluginv1.ToolAnnotations{ReadOnly: 7}); got.Known() {
		t.Errorf("an unknown hint value: %+v", got)
	}
	load := LoadRequest{CapabilityBrokerID: 7, Capabilities: []string{CapConfig}, Session: Session{ID: "s", WorkDir: "/w", StateDir: "/s"},
		Tools: []string{"A"}, ToolConfigs: map[string]string{"A": `{}`}}
	if got := fromProtoLoadRequest(toProtoLoadRequest(load)); !reflect.DeepEqual(got, load) {
		t.Errorf("load request: %+v", got)
	}
	loads := []ToolLoad{{Name: "A", Status: StatusLoaded}, {Name: "B", Status: StatusSkipped, Reason: "r"}, {Name: "C", Status: StatusFailed, Reason: "f"}}
	if got := fromProtoLoadResponse(toProtoLoadResponse(loads)); !reflect.DeepEqual(got, loads) {
		t.Errorf("loads: %+v", got)
	}
	call := CallRequest{ToolCallID: "c", ToolName: "A", Arguments: json.RawMessage(`{"x":1}`)}
	if got := fromProtoCallRequest(toProtoCallRequest(call)); !reflect.DeepEqual(got, call) {
		t.Errorf("call: %+v", got)
	}
	parts := []Part{{Text: "t"}, {MimeType: "image/png", Data: []byte{1}}, {URL: "https://x/y.png"}}
	display := []DisplayBlock{{Kind: "diff", Data: json.RawMessage(`{"path":"a"}`)}}
	for _, r := range []Result{
		{Kind: ResultOk, Output: parts, Message: "m", Brief: "b", Display: display},
		{Kind: ResultError, Output: parts, Message: "m", Brief: "b", Display: display, Runtime: true},
		{Kind: ResultRejected, Feedback: "no", Output: []Part{}, Display: []DisplayBlock{}},
	} {
		got, ok := fromProtoResult(toProtoResult(r))
		if r.Kind == ResultRejected {
			r.Output, r.Display = nil, nil
		}
		if !ok || !reflect.DeepEqual(got, r) {
			t.Errorf("result %v: %+v", r.Kind, got)
		}
	}
	if _, ok := fromProtoResult(&pluginv1.CallResponse{}); ok {
		t.Error("an empty result converted")
	}
	appr := ApprovalRequest{ToolCallID: "c", ToolName: "A", Action: "act", Description: "d", Display: display}
	if got := fromProtoApprovalRequest(toProtoApprovalRequest(appr)); !reflect.DeepEqual(got, appr) {
		t.Errorf("approval: %+v", got)
	}
	env := Environment{OS: "linux", ShellName: "bash", ShellPath: "/bin/bash", WorkDir: "/w", Now: time.Unix(0, 42)}
	if got := fromProtoEnvironment(toProtoEnvironment(env)); !reflect.DeepEqual(got, env) {
		t.Errorf("environment: %+v", got)
	}
	prog := ProgressReport{ToolCallID: "c", ToolName: "A", Progress: 2, Total: 5, Message: "m"}
	if got := fromProtoProgress(toProtoProgress(prog)); got != prog {
		t.Errorf("progress: %+v", got)
	}
}

func TestDisplayDataNotJSONBecomesNull(t *testing.T) {
	got := fromProtoDisplay([]*pluginv1.DisplayBlock{{Kind: "k", Data: "{"}})
	if len(got) != 1 || string(got[0].Data) != "null" {
		t.Fatalf("got %+v", got)
	}
}

func TestLoadStatusString(t *testing.T) {
	for s, want := range map[LoadStatus]string{StatusLoaded: "loaded", StatusSkipped: "skipped", StatusFailed: "failed", StatusUnspecified: "unspecified"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}

func TestQuestionAndModelRoundTrip(t *testing.T) {
	q := QuestionRequest{ToolCallID: "c1", ToolName: "AskUserQuestion", Questions: []Question{{Question: "Which?", Header: "H",
		MultiSelect: true, Options: []QuestionOption{{Label: "a", Description: "first"}, {Label: "b"}}}}}
	if got := fromProtoQuestionRequest(toProtoQuestionRequest(q)); !reflect.DeepEqual(got, q) {
		t.Fatalf("questions: %+v, want %+v", got, q)
	}
	m := ModelInfo{Provider: "openai", Name: "gpt", Alias: "fast", Capabilities: []string{"image_in"}, CapabilitiesKnown: true, MaxContextSize: 1000}
	if got := fromProtoModel(toProtoModel(m)); !reflect.DeepEqual(got, m) {
		t.Fatalf("model: %+v, want %+v", got, m)
	}
}
