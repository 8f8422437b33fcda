package pluginrpc

import (
	"encoding/json"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// The converters between the generated wire types and the Go values, one
// small function a message and direction.

// toProtoDescription converts a Description to its wire form.
func toProtoDescription(d Description) *pluginv1.DescribeResponse {
	resp := &pluginv1.DescribeResponse{SdkVersion: d.SDKVersion, SharedLoads: d.SharedLoads}
	for _, t := range d.Tools {
		resp.Tools = append(resp.Tools, &pluginv1.ToolSpec{
			Name: t.Name, Description: t.Description, ParametersSchema: string(t.ParametersSchema),
			Capabilities: t.Capabilities, DefaultTimeoutMs: t.DefaultTimeout.Milliseconds(),
			RuleArgument: t.RuleArgument, Annotations: toProtoAnnotations(t.Annotations),
		})
	}
	return resp
}

// fromProtoDescription converts a Describe answer to a Description.
func fromProtoDescription(resp *pluginv1.DescribeResponse) Description {
	d := Description{SDKVersion: resp.GetSdkVersion(), SharedLoads: resp.GetSharedLoads()}
	for _, t := range resp.GetTools() {
		d.Tools = append(d.Tools, fromProtoToolSpec(t))
	}
	return d
}

// fromProtoToolSpec converts one described tool.
func fromProtoToolSpec(t *pluginv1.ToolSpec) ToolSpec {
	return ToolSpec{
		Name: t.GetName(), Description: t.GetDescription(), ParametersSchema: json.RawMessage(t.GetParametersSchema()),
		Capabilities: t.GetCapabilities(), DefaultTimeout: time.Duration(t.GetDefaultTimeoutMs()) * time.Millisecond,
		RuleArgument: t.GetRuleArgument(), Annotations: fromProtoAnnotations(t.GetAnnotations()),
	}
}

// toProtoAnnotations converts a tool's annotations; nil when none is
// declared.
func toProtoAnnotations(a Annotations) *pluginv1.ToolAnnotations {
	if !a.Known() {
		return nil
	}
	return &pluginv1.ToolAnnotations{ReadOnly: toProtoHint(a.ReadOnly), Destructive: toProtoHint(a.Destructive),
		Idempotent: toProtoHint(a.Idempotent), OpenWorld: toProtoHint(a.OpenWorld)}
}

// fromProtoAnnotations converts a tool's annotations; absent ones (a
// binary built before annotations) are unknown.
func fromProtoAnnotations(a *pluginv1.ToolAnnotations) Annotations {
	return Annotations{ReadOnly: fromProtoHint(a.GetReadOnly()), Destructive: fromProtoHint(a.GetDestructive()),
		Idempotent: fromProtoHint(a.GetIdempotent()), OpenWorld: fromProtoHint(a.GetOpenWorld())}
}

func toProtoHint(b *bool) pluginv1.ToolAnnotations_Hint {
	switch {
	case b == nil:
		return pluginv1.ToolAnnotations_HINT_UNKNOWN
	case *b:
		return pluginv1.ToolAnnotations_HINT_TRUE
	}
	return pluginv1.ToolAnnotations_HINT_FALSE
}

// fromProtoHint is nil for unknown, and for a value this version does not
// know.
func fromProtoHint(h pluginv1.ToolAnnotations_Hint) *bool {
	var b bool
	switch h {
	case pluginv1.ToolAnnotations_HINT_TRUE:
		b = true
	case pluginv1.ToolAnnotations_HINT_FALSE:
	default:
		return nil
	}
	return &b
}

// toProtoSession converts a Session to its wire form.
func toProtoSession(s Session) *pluginv1.SessionInfo {
	return &pluginv1.SessionInfo{Id: s.ID, WorkDir: s.WorkDir, StateDir: s.StateDir}
}

// fromProtoSession converts a wire session.
func fromProtoSession(s *pluginv1.SessionInfo) Session {
	return Session{ID: s.GetId(), WorkDir: s.GetWorkDir(), StateDir: s.GetStateDir()}
}

// toProtoLoadRequest converts a LoadRequest to its wire form.
func toProtoLoadRequest(r LoadRequest) *pluginv1.LoadRequest {
	return &pluginv1.LoadRequest{
		CapabilityBrokerId: r.CapabilityBrokerID, Capabilities: r.Capabilities,
		Session: toProtoSession(r.Session), Tools: r.Tools, ToolConfigs: r.ToolConfigs, LoadId: r.LoadID,
	}
}

// fromProtoLoadRequest converts a wire Load request.
func fromProtoLoadRequest(r *pluginv1.LoadRequest) LoadRequest {
	return LoadRequest{
		CapabilityBrokerID: r.GetCapabilityBrokerId(), Capabilities: r.GetCapabilities(),
		Session: fromProtoSession(r.GetSession()), Tools: r.GetTools(), ToolConfigs: r.GetToolConfigs(), LoadID: r.GetLoadId(),
	}
}

var toProtoStatus = map[LoadStatus]pluginv1.ToolLoad_Status{
	StatusLoaded:  pluginv1.ToolLoad_STATUS_LOADED,
	StatusSkipped: pluginv1.ToolLoad_STATUS_SKIPPED,
	StatusFailed:  pluginv1.ToolLoad_STATUS_FAILED,
}

// toProtoLoadResponse converts the load outcomes to their wire form.
func toProtoLoadResponse(loads []ToolLoad) *pluginv1.LoadResponse {
	resp := &pluginv1.LoadResponse{}
	for _, l := range loads {
		resp.Tools = append(resp.Tools, &pluginv1.ToolLoad{Name: l.Name, Status: toProtoStatus[l.Status], Reason: l.Reason})
	}
	return resp
}

// fromProtoLoadResponse converts a wire Load answer.
func fromProtoLoadResponse(resp *pluginv1.LoadResponse) []ToolLoad {
	loads := make([]ToolLoad, 0, len(resp.GetTools()))
	for _, l := range resp.GetTools() {
		st := StatusUnspecified
		for s, p := range toProtoStatus {
			if p == l.GetStatus() {
				st = s
			}
		}
		loads = append(loads, ToolLoad{Name: l.GetName(), Status: st, Reason: l.GetReason()})
	}
	return loads
}

// toProtoCallRequest converts a CallRequest to its wire form.
func toProtoCallRequest(r CallRequest) *pluginv1.CallRequest {
	return &pluginv1.CallRequest{ToolCallId: r.ToolCallID, ToolName: r.ToolName, Arguments: string(r.Arguments), LoadId: r.LoadID, TraceContext: r.TraceContext}
}

// fromProtoCallRequest converts a wire Call request.
func fromProtoCallRequest(r *pluginv1.CallRequest) CallRequest {
	return CallRequest{ToolCallID: r.GetToolCallId(), ToolName: r.GetToolName(), Arguments: json.RawMessage(r.GetArguments()), LoadID: r.GetLoadId(), TraceContext: r.GetTraceContext()}
}

// toProtoResult converts a Result to its wire form.
func toProtoResult(r Result) *pluginv1.CallResponse {
	switch r.Kind {
	case ResultError:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Error{Error: &pluginv1.ToolError{
			Message: r.Message, Brief: r.Brief, Output: toProtoParts(r.Output),
			Display: toProtoDisplay(r.Display), Runtime: r.Runtime,
		}}}
	case ResultRejected:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Rejected{Rejected: &pluginv1.ToolRejected{Feedback: r.Feedback}}}
	default:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: &pluginv1.ToolOk{
			Output: toProtoParts(r.Output), Message: r.Message, Brief: r.Brief, Display: toProtoDisplay(r.Display),
		}}}
	}
}

// fromProtoResult converts a wire Call answer; ok is false for an empty one.
func fromProtoResult(resp *pluginv1.CallResponse) (r Result, ok bool) {
	switch x := resp.GetResult().(type) {
	case *pluginv1.CallResponse_Ok:
		return Result{Kind: ResultOk, Output: fromProtoParts(x.Ok.GetOutput()), Message: x.Ok.GetMessage(),
			Brief: x.Ok.GetBrief(), Display: fromProtoDisplay(x.Ok.GetDisplay())}, true
	case *pluginv1.CallResponse_Error:
		return Result{Kind: ResultError, Output: fromProtoParts(x.Error.GetOutput()), Message: x.Error.GetMessage(),
			Brief: x.Error.GetBrief(), Display: fromProtoDisplay(x.Error.GetDisplay()), Runtime: x.Error.GetRuntime()}, true
	case *pluginv1.CallResponse_Rejected:
		return Result{Kind: ResultRejected, Feedback: x.Rejected.GetFeedback()}, true
	}
	return Result{}, false
}

// toProtoParts converts output parts to their wire form.
func toProtoParts(parts []Part) []*pluginv1.ContentPart {
	out := make([]*pluginv1.ContentPart, 0, len(parts))
	for _, p := range parts {
		if p.IsImage() {
			out = append(out, &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Image{Image: &pluginv1.Image{MimeType: p.MimeType, Data: p.Data, Url: p.URL}}})
			continue
		}
		out = append(out, &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: p.Text}})
	}
	return out
}

// fromProtoParts converts wire output parts.
func fromProtoParts(parts []*pluginv1.ContentPart) []Part {
	out := make([]Part, 0, len(parts))
	for _, p := range parts {
		if img := p.GetImage(); img != nil {
			out = append(out, Part{MimeType: img.GetMimeType(), Data: img.GetData(), URL: img.GetUrl()})
			continue
		}
		out = append(out, Part{Text: p.GetText()})
	}
	return out
}

// toProtoDisplay converts display blocks to their wire form.
func toProtoDisplay(blocks []DisplayBlock) []*pluginv1.DisplayBlock {
	out := make([]*pluginv1.DisplayBlock, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, &pluginv1.DisplayBlock{Kind: b.Kind, Data: string(b.Data)})
	}
	return out
}

// fromProtoDisplay converts wire display blocks; data that is not JSON
// becomes null.
func fromProtoDisplay(blocks []*pluginv1.DisplayBlock) []DisplayBlock {
	out := make([]DisplayBlock, 0, len(blocks))
	for _, b := range blocks {
		data := json.RawMessage(b.GetData())
		if !json.Valid(data) {
			data = json.RawMessage("null")
		}
		out = append(out, DisplayBlock{Kind: b.GetKind(), Data: data})
	}
	return out
}

// toProtoApprovalRequest converts an ApprovalRequest to its wire form.
func toProtoApprovalRequest(r ApprovalRequest) *pluginv1.ApprovalRequest {
	return &pluginv1.ApprovalRequest{ToolCallId: r.ToolCallID, ToolName: r.ToolName, Action: r.Action,
		Description: r.Description, Display: toProtoDisplay(r.Display)}
}

// fromProtoApprovalRequest converts a wire approval request.
func fromProtoApprovalRequest(r *pluginv1.ApprovalRequest) ApprovalRequest {
	return ApprovalRequest{ToolCallID: r.GetToolCallId(), ToolName: r.GetToolName(), Action: r.GetAction(),
		Description: r.GetDescription(), Display: fromProtoDisplay(r.GetDisplay())}
}

// toProtoEnvironment converts an Environment to its wire form.
func toProtoEnvironment(e Environment) *pluginv1.EnvironmentInfo {
	return &pluginv1.EnvironmentInfo{Os: e.OS, ShellName: e.ShellName, ShellPath: e.ShellPath, WorkDir: e.WorkDir,
		NowUnixNano: e.Now.UnixNano()}
}

// fromProtoEnvironment converts a wire environment.
func fromProtoEnvironment(e *pluginv1.EnvironmentInfo) Environment {
	return Environment{OS: e.GetOs(), ShellName: e.GetShellName(), ShellPath: e.GetShellPath(), WorkDir: e.GetWorkDir(),
		Now: time.Unix(0, e.GetNowUnixNano())}
}

// toProtoProgress converts a ProgressReport to its wire form.
func toProtoProgress(p ProgressReport) *pluginv1.ProgressReport {
	return &pluginv1.ProgressReport{ToolCallId: p.ToolCallID, ToolName: p.ToolName, Progress: p.Progress,
		Total: p.Total, Message: p.Message}
}

// fromProtoProgress converts a wire progress report.
func fromProtoProgress(p *pluginv1.ProgressReport) ProgressReport {
	return ProgressReport{ToolCallID: p.GetToolCallId(), ToolName: p.GetToolName(), Progress: p.GetProgress(),
		Total: p.GetTotal(), Message: p.GetMessage()}
}

// toProtoQuestionRequest converts a QuestionRequest to its wire form.
func toProtoQuestionRequest(r QuestionRequest) *pluginv1.QuestionRequest {
	out := &pluginv1.QuestionRequest{ToolCallId: r.ToolCallID, ToolName: r.ToolName}
	for _, q := range r.Questions {
		pq := &pluginv1.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			pq.Options = append(pq.Options, &pluginv1.QuestionOption{Label: o.Label, Description: o.Description})
		}
		out.Questions = append(out.Questions, pq)
	}
	return out
}

// fromProtoQuestionRequest converts a wire QuestionRequest.
func fromProtoQuestionRequest(r *pluginv1.QuestionRequest) QuestionRequest {
	out := QuestionRequest{ToolCallID: r.GetToolCallId(), ToolName: r.GetToolName()}
	for _, q := range r.GetQuestions() {
		gq := Question{Question: q.GetQuestion(), Header: q.GetHeader(), MultiSelect: q.GetMultiSelect()}
		for _, o := range q.GetOptions() {
			gq.Options = append(gq.Options, QuestionOption{Label: o.GetLabel(), Description: o.GetDescription()})
		}
		out.Questions = append(out.Questions, gq)
	}
	return out
}

// toProtoModel converts a ModelInfo to its wire form.
func toProtoModel(m ModelInfo) *pluginv1.ModelInfo {
	return &pluginv1.ModelInfo{Provider: m.Provider, Name: m.Name, Alias: m.Alias, Capabilities: m.Capabilities,
		CapabilitiesKnown: m.CapabilitiesKnown, MaxContextSize: m.MaxContextSize}
}

// fromProtoModel converts a wire ModelInfo.
func fromProtoModel(m *pluginv1.ModelInfo) ModelInfo {
	return ModelInfo{Provider: m.GetProvider(), Name: m.GetName(), Alias: m.GetAlias(), Capabilities: m.GetCapabilities(),
		CapabilitiesKnown: m.GetCapabilitiesKnown(), MaxContextSize: m.GetMaxContextSize()}
}
