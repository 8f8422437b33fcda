package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/providers"
)

// tool is a tool served by a supervised plugin binary.
type tool struct {
	spec   toolset.Spec
	plugin *Plugin
	// onProgress receives the call's progress when ctx carries no callback.
	onProgress func(toolset.Progress)
	// annotations are as the plugin's Describe declares them.
	annotations toolset.Annotations
}

func (t *tool) Spec() toolset.Spec { return t.spec }

// Annotations are what the plugin declares the tool does; all unknown for
// a plugin built before annotations.
func (t *tool) Annotations() toolset.Annotations { return t.annotations }

// Call runs the call on the plugin's process (restarted first if it
// stopped). Should the call's context end first, the supervisor makes sure
// the process still answers within the grace period.
func (t *tool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	sup := t.plugin.sup
	// Starting the plugin (at its first call, or again after a crash) is
	// bounded by the start timeout, not by the call's.
	resume := toolset.PauseTimeout(ctx)
	cur, err := sup.Get(ctx)
	if err != nil {
		resume()
		return toolset.RuntimeError(err)
	}
	if t.plugin.release != nil {
		if err := t.plugin.loadedInto(ctx, cur); err != nil {
			resume()
			if cur.Exited() {
				sup.Broken(cur)
			}
			return toolset.RuntimeError(err)
		}
	}
	resume()
	release := sup.Guard(ctx, cur)
	defer t.plugin.calls.start(id, t.spec.Name)()
	defer t.routeProgress(ctx, id)()
	res, err := cur.Call(ctx, pluginrpc.CallRequest{ToolCallID: id, ToolName: t.spec.Name, Arguments: args, LoadID: t.plugin.loadID,
		TraceContext: telemetry.Plugin(ctx, t.plugin.name, cur.pid())})
	release()
	if errors.Is(err, pluginrpc.ErrEmptyResult) {
		return toolset.RuntimeError(err)
	}
	if err != nil {
		crashed := ctx.Err() == nil && (status.Code(err) == codes.Unavailable || cur.Exited())
		if crashed {
			sup.Broken(cur)
		}
		out := toolset.RuntimeError(callError(ctx, cur, err))
		out.Crashed = crashed
		return out
	}
	return toolResult(boundResult(res, t.plugin.name, id, t.plugin.stateDir))
}

// exitWait bounds the wait for go-plugin to see a plugin's exit, after which
// its stderr has been read to the end.
const exitWait = 2 * time.Second

func callError(ctx context.Context, p *Process, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))
	case status.Code(err) == codes.ResourceExhausted:
		return fmt.Errorf("plugin %s: the message exceeds the size limit of %s for one message between host and plugin: %s",
			p.Name, limits.Size(pluginrpc.MaxMessageBytes), status.Convert(err).Message())
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

// toolResult maps a plugin's result to the toolset's: images become data
// URLs (or keep their URL), a runtime error gets the toolset's runtime
// error text.
func toolResult(r pluginrpc.Result) toolset.Result {
	switch r.Kind {
	case pluginrpc.ResultError:
		if r.Runtime {
			out := toolset.RuntimeError(errors.New(r.Message))
			out.Output = toolParts(r.Output)
			return out
		}
		return toolset.Result{Kind: toolset.Failed, Output: toolParts(r.Output), Message: r.Message,
			Brief: r.Brief, Display: toolDisplay(r.Display)}
	case pluginrpc.ResultRejected:
		return toolset.RejectedResult(r.Feedback)
	}
	return toolset.Result{Kind: toolset.Ok, Output: toolParts(r.Output), Message: r.Message,
		Brief: r.Brief, Display: toolDisplay(r.Display)}
}

func toolParts(parts []pluginrpc.Part) []providers.ContentPart {
	out := make([]providers.ContentPart, 0, len(parts))
	for _, p := range parts {
		if p.IsImage() {
			url := p.URL
			if url == "" {
				url = providers.DataURL(p.MimeType, p.Data)
			}
			out = append(out, providers.ContentPart{Type: providers.PartImage, ImageURL: url})
			continue
		}
		out = append(out, providers.TextPart(p.Text))
	}
	return out
}

// toolDisplay maps display blocks; pluginrpc has made data that is not
// JSON null.
func toolDisplay(blocks []pluginrpc.DisplayBlock) []toolset.Display {
	out := make([]toolset.Display, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, toolset.Display{Kind: b.Kind, Data: b.Data})
	}
	return out
}

// calls are the calls in progress on one plugin, by id: the capability
// server answers approvals, questions and progress for these only, and
// names their tool.
type calls struct {
	mu  sync.Mutex
	ids map[string]callRef
}

type callRef struct {
	tool string
	n    int
}

// start records a call until the returned function is called.
func (c *calls) start(id, tool string) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]callRef{}
	}
	r := c.ids[id]
	r.tool, r.n = tool, r.n+1
	c.ids[id] = r
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		r := c.ids[id]
		if r.n--; r.n <= 0 {
			delete(c.ids, id)
			return
		}
		c.ids[id] = r
	}
}

// ToolOf implements capability.CallTracker.
func (c *calls) ToolOf(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.ids[id]
	return r.tool, ok
}
