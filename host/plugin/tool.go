package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
	"github.com/kosong-host/kosong-host/providers"
)

// tool is a tool served by a supervised plugin binary.
type tool struct {
	spec   toolset.Spec
	plugin *Plugin
	// onProgress receives the call's progress when ctx carries no callback.
	onProgress func(toolset.Progress)
}

func (t *tool) Spec() toolset.Spec { return t.spec }

// Call runs the call on the plugin's process (restarted first if it
// stopped). Should the call's context end first, the supervisor makes sure
// the process still answers within the grace period.
func (t *tool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	sup := t.plugin.sup
	cur, err := sup.Get(ctx)
	if err != nil {
		return toolset.RuntimeError(err)
	}
	release := sup.Guard(ctx, cur)
	defer t.routeProgress(ctx, id)()
	resp, err := cur.Call(ctx, &pluginv1.CallRequest{ToolCallId: id, ToolName: t.spec.Name, Arguments: string(args)})
	release()
	if err != nil {
		if ctx.Err() == nil && (status.Code(err) == codes.Unavailable || cur.Exited()) {
			sup.Broken(cur)
		}
		return toolset.RuntimeError(callError(ctx, cur, err))
	}
	return fromProto(resp)
}

// exitWait bounds the wait for go-plugin to see a plugin's exit, after which
// its stderr has been read to the end.
const exitWait = 2 * time.Second

func callError(ctx context.Context, p *Process, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))
	case status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("plugin %s: the message exceeds the size limit: %s", p.Name, status.Convert(err).Message())
	case p.Exited() || status.Code(err) == codes.Unavailable:
		if err := remoteLost(p); err != nil {
			return err
		}
		// Once go-plugin reports the exit, the plugin's stderr has been read
		// to the end: wait a little for it, to quote the last lines.
		t := time.NewTimer(exitWait)
		select {
		case <-p.Done():
		case <-t.C:
		}
		t.Stop()
		msg := fmt.Sprintf("plugin %s stopped during the call", p.Name)
		if words := p.LastWords(); words != "" {
			msg += ": " + words
		}
		return errors.New(msg)
	}
	return fmt.Errorf("plugin %s: %s", p.Name, status.Convert(err).Message())
}

func fromProto(resp *pluginv1.CallResponse) toolset.Result {
	switch x := resp.GetResult().(type) {
	case *pluginv1.CallResponse_Ok:
		return toolset.Result{Kind: toolset.Ok, Output: fromParts(x.Ok.GetOutput()), Message: x.Ok.GetMessage(),
			Brief: x.Ok.GetBrief(), Display: fromDisplay(x.Ok.GetDisplay())}
	case *pluginv1.CallResponse_Error:
		if x.Error.GetRuntime() {
			r := toolset.RuntimeError(errors.New(x.Error.GetMessage()))
			r.Output = fromParts(x.Error.GetOutput())
			return r
		}
		return toolset.Result{Kind: toolset.Failed, Output: fromParts(x.Error.GetOutput()), Message: x.Error.GetMessage(),
			Brief: x.Error.GetBrief(), Display: fromDisplay(x.Error.GetDisplay())}
	case *pluginv1.CallResponse_Rejected:
		return toolset.RejectedResult(x.Rejected.GetFeedback())
	}
	return toolset.RuntimeError(errors.New("the plugin returned an empty result"))
}

func fromParts(parts []*pluginv1.ContentPart) []providers.ContentPart {
	out := make([]providers.ContentPart, 0, len(parts))
	for _, p := range parts {
		if img := p.GetImage(); img != nil {
			url := img.GetUrl()
			if url == "" {
				url = providers.DataURL(img.GetMimeType(), img.GetData())
			}
			out = append(out, providers.ContentPart{Type: providers.PartImage, ImageURL: url})
			continue
		}
		out = append(out, providers.TextPart(p.GetText()))
	}
	return out
}

func fromDisplay(blocks []*pluginv1.DisplayBlock) []toolset.Display {
	out := make([]toolset.Display, 0, len(blocks))
	for _, b := range blocks {
		data := json.RawMessage(b.GetData())
		if !json.Valid(data) {
			data = json.RawMessage("null")
		}
		out = append(out, toolset.Display{Kind: b.GetKind(), Data: data})
	}
	return out
}
