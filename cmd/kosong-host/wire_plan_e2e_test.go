package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestWireSlashCommandsAndPlanMode: initialize lists the slash commands, a
// prompt "/plan on" runs the command (no model turn), set_plan_mode
// switches plan mode with a StatusUpdate, and in plan mode WriteFile is
// refused without an approval.
func TestWireSlashCommandsAndPlanMode(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: w1, name: WriteFile, arguments: {path: "w.txt", content: "x"}}
  - text: "Planned."
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
	res := initWire(c)
	var names []string
	for _, sc := range res["result"].(map[string]any)["slash_commands"].([]any) {
		e := sc.(map[string]any)
		if e["description"] == "" || e["aliases"] == nil {
			t.Errorf("slash command %v lacks a description or aliases", e)
		}
		names = append(names, e["name"].(string))
	}
	for _, want := range []string{"compact", "plan", "clear", "model", "init"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("slash_commands %v lack %s", names, want)
		}
	}

	c.request("p1", "prompt", map[string]any{"user_input": "/plan on"})
	c.event("StatusUpdate", func(p map[string]any) bool { return p["plan_mode"] == true })
	c.event("ContentPart", func(p map[string]any) bool { return strings.HasPrefix(fmt.Sprint(p["text"]), "Plan mode on") })
	if r := c.response("p1"); fmt.Sprint(r["result"]) != "map[status:finished]" {
		t.Fatalf("/plan on: %v", r)
	}

	tests := []struct {
		id     string
		params any
		want   string
	}{
		{"s1", map[string]any{"enabled": false}, "map[plan_mode:false status:ok]"},
		{"s2", map[string]any{}, "map[code:-32602 message:Invalid parameters for method `set_plan_mode`]"},
		{"s3", map[string]any{"enabled": true}, "map[plan_mode:true status:ok]"},
	}
	for _, tt := range tests {
		c.request(tt.id, "set_plan_mode", tt.params)
		r := c.response(tt.id)
		got := fmt.Sprint(r["result"])
		if r["error"] != nil {
			got = fmt.Sprint(r["error"])
		}
		if got != tt.want {
			t.Errorf("set_plan_mode %v: %s, want %s", tt.params, got, tt.want)
		}
	}
	var updates []string
	for _, m := range c.seen {
		if p, _ := m["params"].(map[string]any); p["type"] == "StatusUpdate" {
			updates = append(updates, fmt.Sprint(p["payload"]))
		}
	}
	if got := strings.Join(updates, " "); got != "map[plan_mode:true] map[plan_mode:false] map[plan_mode:true]" {
		t.Errorf("StatusUpdate events %s, want plan mode on, off, on", got)
	}

	c.request("p2", "prompt", map[string]any{"user_input": "Plan it."})
	resp, results := c.untilResponse("p2", func(m map[string]any, typ string, pl map[string]any) {
		t.Errorf("request %s %v in plan mode", typ, pl)
		c.answer(m["id"], map[string]any{"response": "reject"})
	})
	if fmt.Sprint(resp["result"]) != "map[status:finished steps:2]" {
		t.Fatalf("prompt: %v", resp)
	}
	if results["w1"]["is_error"] != true || !strings.HasPrefix(fmt.Sprint(results["w1"]["message"]), "WriteFile is not available in plan mode.") {
		t.Errorf("WriteFile in plan mode: %v", results["w1"])
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
		t.Error("w.txt written in plan mode")
	}
}

// TestWirePlanToolsNeedSupportsPlanMode: as in Kimi CLI, the model is
// offered EnterPlanMode and ExitPlanMode only when the wire client's
// initialize declares capabilities.supports_plan_mode; the result says
// which. set_plan_mode works either way.
func TestWirePlanToolsNeedSupportsPlanMode(t *testing.T) {
	for _, supports := range []bool{false, true} {
		t.Run(fmt.Sprint("supports_plan_mode=", supports), func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Hi."}})
			dir, env := t.TempDir(), emptyEnv(t)
			cfgDir := strings.TrimPrefix(env[2], "XDG_CONFIG_HOME=")
			if err := os.MkdirAll(filepath.Join(cfgDir, "kosong-host"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cfgDir, "kosong-host", "config.yaml"), []byte(openaiConfig(srv, "thinking")), 0o600); err != nil {
				t.Fatal(err)
			}
			c := startWire(t, dir, env, "--model", "local")
			c.request("init", "initialize", map[string]any{"protocol_version": "1.10", "client": map[string]any{"name": "test"},
				"capabilities": map[string]any{"supports_plan_mode": supports}})
			caps := c.response("init")["result"].(map[string]any)["capabilities"].(map[string]any)
			if caps["supports_plan_mode"] != supports {
				t.Errorf("initialize capabilities %v", caps)
			}
			c.request("s1", "set_plan_mode", map[string]any{"enabled": false})
			if r := c.response("s1"); fmt.Sprint(r["result"]) != "map[plan_mode:false status:ok]" {
				t.Errorf("set_plan_mode: %v", r)
			}
			c.request("p1", "prompt", map[string]any{"user_input": "hi"})
			if r := c.response("p1"); fmt.Sprint(r["result"]) != "map[status:finished steps:1]" {
				t.Fatalf("prompt: %v", r)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			offered := map[string]bool{}
			for _, tl := range reqs[0].Chat.Tools {
				offered[tl.Function.Name] = true
			}
			if !offered["ReadFile"] {
				t.Fatalf("tools offered %v lack ReadFile", offered)
			}
			if offered["EnterPlanMode"] != supports || offered["ExitPlanMode"] != supports {
				t.Errorf("EnterPlanMode offered %v, ExitPlanMode %v; want %v", offered["EnterPlanMode"], offered["ExitPlanMode"], supports)
			}
		})
	}
}
