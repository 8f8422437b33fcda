package repl

import (
	"context"
	"fmt"
)

// cmdModel shows the model, or switches to the model a configured alias,
// an alias's model or PROVIDER/MODEL names; a name the configuration does
// not know is refused (with a "did you mean") and nothing changes. The
// usage line follows the switch: its window is the new model's.
func (r *REPL) cmdModel(ctx context.Context, arg string) bool {
	p := r.conv.Provider()
	if p == nil {
		r.say("/model is not available in this run")
		return false
	}
	if arg == "" {
		r.say("model: %s/%s%s (switch with /model ALIAS or /model PROVIDER/MODEL; `kosong-host models` lists the aliases)",
			p.Name(), p.Model(), windowText(r.conv.MaxContextSize()))
		return false
	}
	if err := r.conv.SetModel(ctx, arg); err != nil {
		r.say("error: %v; the model stays %s/%s", err, p.Name(), p.Model())
		return false
	}
	if w, ok := r.cfg.Printer.(interface{ SetMaxContextSize(int64) }); ok {
		w.SetMaxContextSize(r.conv.MaxContextSize())
	}
	p = r.conv.Provider()
	r.say("model: %s/%s%s; the conversation carries on with it.", p.Name(), p.Model(), windowText(r.conv.MaxContextSize()))
	return false
}

// windowText is " (context window 200k)", or "" when it is unknown.
func windowText(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (context window %s)", compactTokens(n))
}

// SetMaxContextSize sets the context window the usage line measures
// against (0: unknown), as when /model switches the model.
func (p *TextPrinter) SetMaxContextSize(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxContext = n
}
