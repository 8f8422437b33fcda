package capability

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

func TestOffered(t *testing.T) {
	ask := approval.UserInputFunc(func(context.Context, approval.QuestionRequest) (approval.Answers, error) {
		return approval.Answers{}, nil
	})
	tests := []struct {
		name string
		host *Host
		want []string
	}{
		{"no one to answer, model unknown", &Host{}, Offered},
		{"questions", &Host{Questions: ask}, append(slices.Clone(Offered), pluginrpc.CapUserInput)},
		{"model", &Host{Model: &Model{Name: "m"}}, append(slices.Clone(Offered), pluginrpc.CapModel)},
	}
	for _, tt := range tests {
		if got := tt.host.Offered(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Offered() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestUserInput(t *testing.T) {
	var got approval.QuestionRequest
	ask := approval.UserInputFunc(func(_ context.Context, r approval.QuestionRequest) (approval.Answers, error) {
		got = r
		return approval.Answers{Answers: map[string]string{"Which?": "b"}}, nil
	})
	req := pluginrpc.QuestionRequest{ToolCallID: "c1", ToolName: "AskUserQuestion", Questions: []pluginrpc.Question{{
		Question: "Which?", Header: "H", MultiSelect: true,
		Options: []pluginrpc.QuestionOption{{Label: "a", Description: "first"}, {Label: "b"}}}}}
	mine := calls{"c1": "Ask"}
	declared := map[string][]string{"Ask": {pluginrpc.CapUserInput}}
	tests := []struct {
		name string
		host *Host
		id   string
		code codes.Code
	}{
		{"answered", &Host{Questions: ask, Calls: mine, Declared: declared}, "c1", codes.OK},
		{"no one can answer", &Host{Calls: mine, Declared: declared}, "c1", codes.Unimplemented},
		{"no call in progress", &Host{Questions: ask, Calls: calls{}, Declared: declared}, "c1", codes.FailedPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.host.AskUser(context.Background(), req)
			if status.Code(err) != tt.code {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if tt.code != codes.OK {
				return
			}
			if !maps.Equal(resp.Answers, map[string]string{"Which?": "b"}) {
				t.Fatalf("answers %v", resp.Answers)
			}
			q := got.Questions[0]
			if got.ToolCallID != "c1" || got.ToolName != "Ask" || q.Header != "H" || !q.MultiSelect || q.Options[0].Description != "first" || len(q.Options) != 2 {
				t.Fatalf("asked %+v", got)
			}
		})
	}
}

// TestUserInputIsBounded: a request with too many questions or options,
// or too much text, is refused naming the tool and plugin, and never
// reaches the person answering.
func TestUserInputIsBounded(t *testing.T) {
	asked := false
	ask := approval.UserInputFunc(func(context.Context, approval.QuestionRequest) (approval.Answers, error) {
		asked = true
		return approval.Answers{}, nil
	})
	h := &Host{Plugin: "hostile", Questions: ask, Calls: calls{"c1": "Ask"}, Declared: map[string][]string{"Ask": {pluginrpc.CapUserInput}}}
	two := []pluginrpc.QuestionOption{{Label: "a"}, {Label: "b"}}
	many := func(n int) []pluginrpc.Question {
		qs := make([]pluginrpc.Question, n)
		for i := range qs {
			qs[i] = pluginrpc.Question{Question: "Q?", Options: two}
		}
		return qs
	}
	tests := []struct {
		name      string
		questions []pluginrpc.Question
		want      string // "" : asked
	}{
		{"at the limits", append(many(limits.Questions-1), pluginrpc.Question{Question: strings.Repeat("q", limits.QuestionBytes-100), Options: two}), ""},
		{"too many questions", many(limits.Questions + 1), "17 questions, over the limit of 16"},
		{"too many options", []pluginrpc.Question{{Question: "Q?", Options: make([]pluginrpc.QuestionOption, limits.Questions+1)}}, "question 1 offers 17 options"},
		{"too much text", []pluginrpc.Question{{Question: "Q?", Options: []pluginrpc.QuestionOption{{Label: "a", Description: strings.Repeat("d", 1<<20)}, {Label: "b"}}}}, "1.0 MiB of text, over the limit of 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = false
			_, err := h.AskUser(context.Background(), pluginrpc.QuestionRequest{ToolCallID: "c1", Questions: tt.questions})
			if tt.want == "" {
				if err != nil || !asked {
					t.Fatalf("within the limits: err %v, asked %v", err, asked)
				}
				return
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "questions of tool Ask of plugin hostile: "+tt.want) || asked {
				t.Fatalf("err = %v (asked %v); want InvalidArgument with %q", err, asked, tt.want)
			}
		})
	}
}

func TestModel(t *testing.T) {
	if _, err := (&Host{}).GetModel(context.Background()); status.Code(err) != codes.Unimplemented {
		t.Fatalf("no model: %v", err)
	}
	m := &Model{Provider: "openai", Name: "gpt", Alias: "fast", Capabilities: []string{"image_in"}, CapabilitiesKnown: true, MaxContextSize: 128000}
	info, err := (&Host{Model: m, Declared: map[string][]string{"T": {pluginrpc.CapModel}}}).GetModel(context.Background())
	if err != nil || info.Alias != "fast" || !info.CapabilitiesKnown || info.MaxContextSize != 128000 ||
		!slices.Equal(info.Capabilities, []string{"image_in"}) {
		t.Fatalf("model %v: %v", info, err)
	}
}
