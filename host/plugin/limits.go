package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// The host applies the limits of package limits to what a plugin sends,
// whatever it was built with: a plugin built on pluginsdk has applied the
// result caps already, and is never cut again.

// checkSpec refuses a tool whose declaration is over the limits: its
// schema and description go into every model request.
func checkSpec(plugin string, t pluginrpc.ToolSpec) error {
	if n := len(t.ParametersSchema); n > limits.SchemaBytes {
		return fmt.Errorf("plugin %s: tool %s declares a parameters schema of %s, over the limit of %s for a tool's schema",
			plugin, t.Name, limits.Size(n), limits.Size(limits.SchemaBytes))
	}
	if n := len(t.Description); n > limits.DescriptionBytes {
		return fmt.Errorf("plugin %s: tool %s declares a description of %s, over the limit of %s for a tool's description",
			plugin, t.Name, limits.Size(n), limits.Size(limits.DescriptionBytes))
	}
	return nil
}

func partText(p pluginrpc.Part) (string, bool) { return p.Text, !p.IsImage() }

func withText(_ pluginrpc.Part, s string) pluginrpc.Part { return pluginrpc.Part{Text: s} }

// boundResult applies the result limits to r, a result of call id of the
// plugin: its images, its output text (cut as the SDK cuts it, the full text
// saved where the SDK saves it: outputs/ID.txt under the plugin's state dir,
// stateDir), message, brief, feedback and display blocks.
func boundResult(r pluginrpc.Result, plugin, id, stateDir string) pluginrpc.Result {
	var bigImage bool
	for _, p := range r.Output {
		bigImage = bigImage || p.IsImage() && len(p.Data)+len(p.URL) > limits.ImageBytes
	}
	if bigImage {
		out := make([]pluginrpc.Part, len(r.Output))
		for i, p := range r.Output {
			if n := len(p.Data) + len(p.URL); p.IsImage() && n > limits.ImageBytes {
				p = pluginrpc.Part{Text: fmt.Sprintf("[image of %s left out: plugin %s sent more than the %s an image may have]",
					limits.Size(n), plugin, limits.Size(limits.ImageBytes))}
			}
			out[i] = p
		}
		r.Output = out
	}
	r.Message, _ = limits.Cut(r.Message, limits.ResultChars)
	r.Brief, _ = limits.Cut(r.Brief, limits.BriefChars)
	r.Feedback, _ = limits.Cut(r.Feedback, limits.ResultChars)
	r.Display = boundDisplay(r.Display, plugin)
	parts, cut := limits.CutOutput(r.Output, partText, withText)
	if !cut {
		return r
	}
	full := limits.FullText(r.Output, partText)
	r.Output = parts
	r.Message = limits.NoteCut(r.Message, stateDir, id, full)
	return r
}

// boundDisplay keeps the display blocks that fit limits.DisplayBytes, in
// order, and replaces the rest by one brief block saying what was left out.
func boundDisplay(blocks []pluginrpc.DisplayBlock, plugin string) []pluginrpc.DisplayBlock {
	total := 0
	for _, b := range blocks {
		total += len(b.Kind) + len(b.Data)
	}
	if total <= limits.DisplayBytes {
		return blocks
	}
	budget := limits.DisplayBytes
	var kept []pluginrpc.DisplayBlock
	left := 0
	for _, b := range blocks {
		if n := len(b.Kind) + len(b.Data); n <= budget && left == 0 {
			kept = append(kept, b)
			budget -= n
			continue
		}
		left += len(b.Kind) + len(b.Data)
	}
	return append(kept, leftOut(fmt.Sprintf("[%s of display left out: plugin %s sent more than the %s a result may show]",
		limits.Size(left), plugin, limits.Size(limits.DisplayBytes))))
}

// leftOut is a brief display block of text, saying what was left out.
func leftOut(text string) pluginrpc.DisplayBlock {
	data, _ := json.Marshal(text)
	return pluginrpc.DisplayBlock{Kind: "brief", Data: data}
}
