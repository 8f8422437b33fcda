package pluginsdk

import (
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// toProtoResult converts a Result to its wire form.
func toProtoResult(r Result) *pluginv1.CallResponse {
	switch r.Kind {
	case KindError:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Error{Error: &pluginv1.ToolError{
			Message: r.Message, Brief: r.Brief, Output: toProtoParts(r.Output),
			Display: toProtoDisplay(r.Display), Runtime: r.Runtime,
		}}}
	case KindRejected:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Rejected{Rejected: &pluginv1.ToolRejected{Feedback: r.Feedback}}}
	default:
		return &pluginv1.CallResponse{Result: &pluginv1.CallResponse_Ok{Ok: &pluginv1.ToolOk{
			Output: toProtoParts(r.Output), Message: r.Message, Brief: r.Brief, Display: toProtoDisplay(r.Display),
		}}}
	}
}

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

func toProtoDisplay(blocks []DisplayBlock) []*pluginv1.DisplayBlock {
	out := make([]*pluginv1.DisplayBlock, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, &pluginv1.DisplayBlock{Kind: b.Kind, Data: encodeDisplayData(b.Data)})
	}
	return out
}
