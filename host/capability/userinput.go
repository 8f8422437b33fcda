package capability

import (
	"context"
	"fmt"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Model are the facts of the session's model the Model capability reports.
type Model struct {
	Provider string
	Name     string
	Alias    string
	// Capabilities are the alias's (image_in, video_in, thinking...), when
	// CapabilitiesKnown.
	Capabilities      []string
	CapabilitiesKnown bool
	MaxContextSize    int64
}

// Offered lists the capabilities this host serves to this plugin: the
// base ones, UserInput when someone can answer, Model when the model is
// known.
func (h *Host) Offered() []string {
	out := append([]string(nil), Offered...)
	if h.Questions != nil {
		out = append(out, pluginrpc.CapUserInput)
	}
	if h.Model != nil {
		out = append(out, pluginrpc.CapModel)
	}
	if h.Editor != nil {
		out = append(out, pluginrpc.CapEditor)
	}
	if h.Terminal != nil {
		out = append(out, pluginrpc.CapTerminal)
	}
	return out
}

// AskUser asks Questions a call's questions.
func (h *Host) AskUser(ctx context.Context, r pluginrpc.QuestionRequest) (pluginrpc.Answers, error) {
	if h.Questions == nil {
		return pluginrpc.Answers{}, status.Error(codes.Unimplemented, "no one can answer questions in this session")
	}
	tool, err := h.callTool("questions asked", r.ToolCallID)
	if err != nil {
		return pluginrpc.Answers{}, err
	}
	if err := h.declared(pluginrpc.CapUserInput, tool); err != nil {
		return pluginrpc.Answers{}, err
	}
	if err := boundQuestions(r.Questions); err != nil {
		return pluginrpc.Answers{}, status.Errorf(codes.InvalidArgument, "questions of tool %s of plugin %s: %v", tool, h.Plugin, err)
	}
	q := approval.QuestionRequest{ToolCallID: r.ToolCallID, ToolName: tool}
	for _, rq := range r.Questions {
		hq := approval.Question{Question: rq.Question, Header: rq.Header, MultiSelect: rq.MultiSelect}
		for _, o := range rq.Options {
			hq.Options = append(hq.Options, approval.QuestionOption{Label: o.Label, Description: o.Description})
		}
		q.Questions = append(q.Questions, hq)
	}
	a, err := h.Questions.Ask(ctx, q)
	if err != nil {
		return pluginrpc.Answers{}, status.Errorf(codes.Aborted, "questions: %v", err)
	}
	return pluginrpc.Answers{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

// GetModel reports Model.
func (h *Host) GetModel(context.Context) (pluginrpc.ModelInfo, error) {
	m := h.Model
	if m == nil {
		return pluginrpc.ModelInfo{}, status.Error(codes.Unimplemented, "the host does not know the session's model")
	}
	if err := h.declared(pluginrpc.CapModel, ""); err != nil {
		return pluginrpc.ModelInfo{}, err
	}
	return pluginrpc.ModelInfo{Provider: m.Provider, Name: m.Name, Alias: m.Alias,
		Capabilities: m.Capabilities, CapabilitiesKnown: m.CapabilitiesKnown, MaxContextSize: m.MaxContextSize}, nil
}

// boundQuestions refuses a request over limits.Questions or
// limits.QuestionBytes.
func boundQuestions(qs []pluginrpc.Question) error {
	if len(qs) > limits.Questions {
		return fmt.Errorf("%d questions, over the limit of %d a request", len(qs), limits.Questions)
	}
	size := 0
	for i, q := range qs {
		if len(q.Options) > limits.Questions {
			return fmt.Errorf("question %d offers %d options, over the limit of %d", i+1, len(q.Options), limits.Questions)
		}
		size += len(q.Question) + len(q.Header)
		for _, o := range q.Options {
			size += len(o.Label) + len(o.Description)
		}
	}
	if size > limits.QuestionBytes {
		return fmt.Errorf("%s of text, over the limit of %s a request", limits.Size(size), limits.Size(limits.QuestionBytes))
	}
	return nil
}
