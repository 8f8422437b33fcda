package pluginsdk

import (
	"encoding/json"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// The mappings between the author-facing types and pluginrpc's.

var toRPCKind = map[ResultKind]pluginrpc.ResultKind{
	KindOk: pluginrpc.ResultOk, KindError: pluginrpc.ResultError, KindRejected: pluginrpc.ResultRejected,
}

func toRPCResult(r Result) pluginrpc.Result {
	out := pluginrpc.Result{Kind: toRPCKind[r.Kind], Message: r.Message, Brief: r.Brief,
		Display: toRPCDisplay(r.Display), Feedback: r.Feedback, Runtime: r.Runtime}
	for _, p := range r.Output {
		out.Output = append(out.Output, pluginrpc.Part{Text: p.Text, MimeType: p.MimeType, Data: p.Data, URL: p.URL})
	}
	return out
}

func toRPCDisplay(blocks []DisplayBlock) []pluginrpc.DisplayBlock {
	out := make([]pluginrpc.DisplayBlock, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, pluginrpc.DisplayBlock{Kind: b.Kind, Data: encodeDisplayData(b.Data)})
	}
	return out
}

func encodeDisplayData(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok && json.Valid(raw) {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
