package capability

import (
	"context"

	"github.com/kosong-host/kosong-host/host/approval"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// The question types of the UserInput capability are the approval
// package's, where the front ends meet them.
type (
	QuestionOption  = approval.QuestionOption
	Question        = approval.Question
	QuestionRequest = approval.QuestionRequest
	Answers         = approval.Answers
	UserInput       = approval.UserInput
	UserInputFunc   = approval.UserInputFunc
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
	return out
}

type userInputServer struct {
	pluginv1.UnimplementedUserInputServer
	h *Host
}

func (s userInputServer) Ask(ctx context.Context, req *pluginv1.QuestionRequest) (*pluginv1.QuestionResponse, error) {
	h := s.h
	if h.Questions == nil {
		return nil, status.Error(codes.Unimplemented, "no one can answer questions in this session")
	}
	if req.GetToolCallId() == "" || (h.Calls != nil && !h.Calls.Active(req.GetToolCallId())) {
		return nil, status.Errorf(codes.FailedPrecondition,
			"questions asked by plugin %s with no tool call in progress (tool call id %q)", h.Plugin, req.GetToolCallId())
	}
	r := pluginrpc.FromProtoQuestionRequest(req)
	q := QuestionRequest{ToolCallID: r.ToolCallID, ToolName: r.ToolName}
	for _, rq := range r.Questions {
		hq := Question{Question: rq.Question, Header: rq.Header, MultiSelect: rq.MultiSelect}
		for _, o := range rq.Options {
			hq.Options = append(hq.Options, QuestionOption{Label: o.Label, Description: o.Description})
		}
		q.Questions = append(q.Questions, hq)
	}
	a, err := h.Questions.Ask(ctx, q)
	if err != nil {
		return nil, status.Errorf(codes.Aborted, "questions: %v", err)
	}
	return &pluginv1.QuestionResponse{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

type modelServer struct {
	pluginv1.UnimplementedModelServer
	h *Host
}

func (s modelServer) Get(context.Context, *pluginv1.ModelRequest) (*pluginv1.ModelInfo, error) {
	m := s.h.Model
	if m == nil {
		return nil, status.Error(codes.Unimplemented, "the host does not know the session's model")
	}
	return pluginrpc.ToProtoModel(pluginrpc.ModelInfo{Provider: m.Provider, Name: m.Name, Alias: m.Alias,
		Capabilities: m.Capabilities, CapabilitiesKnown: m.CapabilitiesKnown, MaxContextSize: m.MaxContextSize}), nil
}
