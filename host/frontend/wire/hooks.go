package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/kosong-host/kosong-host/host/hooks"
)

// hookSubscription is one entry of initialize.hooks: the client answers
// the hooks of event whose target matches matcher (a regular expression;
// "" matches all), within timeout seconds (default 30, 1 to 600).
type hookSubscription struct {
	ID      string  `json:"id"`
	Event   string  `json:"event"`
	Matcher string  `json:"matcher"`
	Timeout float64 `json:"timeout"`
}

// subscribedHooks are the client hooks of the connection's first message
// when it is an initialize: they are set when the conversation opens, with
// the agent's own hooks. Subscriptions to unknown events, with a matcher
// that does not compile or without an id are ignored (logged), as Kimi
// ignores them.
func (s *server) subscribedHooks(line []byte) []hooks.Hook {
	var m message
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return nil
	}
	var p initParams
	if json.Unmarshal(m.Params, &p) != nil {
		return nil
	}
	var out []hooks.Hook
	for _, sub := range p.Hooks {
		if !slices.Contains(hooks.Events, sub.Event) || sub.ID == "" {
			s.cfg.Logger.Warn("wire: hook subscription ignored: unknown event or no id", "id", sub.ID, "event", sub.Event)
			continue
		}
		if _, err := regexp.Compile(sub.Matcher); err != nil {
			s.cfg.Logger.Warn("wire: hook subscription ignored: bad matcher", "id", sub.ID, "error", err)
			continue
		}
		timeout := hooks.DefaultTimeout
		if sub.Timeout > 0 {
			timeout = min(max(time.Duration(sub.Timeout*float64(time.Second)), hooks.MinTimeout), hooks.MaxTimeout)
		}
		out = append(out, hooks.Hook{Event: sub.Event, Matcher: sub.Matcher, Timeout: timeout,
			Command: "wire:" + sub.ID, File: "wire initialize", Handler: s.hookHandler(sub)})
	}
	return out
}

// hooksResult is initialize's hooks: the events a hook can subscribe to
// and the client hooks in force, counted by event.
func (s *server) hooksResult() map[string]any {
	configured := map[string]int{}
	for _, h := range s.clientHooks {
		configured[h.Event]++
	}
	return map[string]any{"supported_events": hooks.Events, "configured": configured}
}

// hookHandler sends a HookRequest for sub and reads the client's answer,
// between a HookTriggered and a HookResolved event.
func (s *server) hookHandler(sub hookSubscription) hooks.Handler {
	return func(ctx context.Context, target string, input []byte) (hooks.Action, string, error) {
		start := time.Now()
		s.emit("HookTriggered", map[string]any{"event": sub.Event, "target": target, "hook_count": 1,
			"subscription_id": sub.ID})
		action, reason, err := s.askHook(ctx, sub, target, input)
		resolved := action
		if err != nil {
			resolved = hooks.ActionAllow
		}
		s.emit("HookResolved", map[string]any{"event": sub.Event, "target": target, "action": string(resolved),
			"reason": reason, "duration_ms": time.Since(start).Milliseconds(), "subscription_id": sub.ID})
		return action, reason, err
	}
}

func (s *server) askHook(ctx context.Context, sub hookSubscription, target string, input []byte) (hooks.Action, string, error) {
	id := s.peer.nextID("hook")
	raw, err := s.peer.call(ctx, id, "request", map[string]any{"type": "HookRequest", "payload": map[string]any{
		"id": id, "subscription_id": sub.ID, "event": sub.Event, "target": target, "input_data": json.RawMessage(input),
	}})
	if err != nil {
		return hooks.ActionAllow, "", err
	}
	var ans struct {
		Action string `json:"action"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return hooks.ActionAllow, "", fmt.Errorf("invalid answer: %v", err)
	}
	switch ans.Action {
	case "block":
		return hooks.ActionBlock, ans.Reason, nil
	case "allow", "":
		return hooks.ActionAllow, ans.Reason, nil
	}
	return hooks.ActionAllow, "", fmt.Errorf("unknown action %q", ans.Action)
}
