package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// budgetSetup is a folder with the Echo agent and a configuration whose
// alias "local" is the fake server srv, priced $1 in and $10 out per
// million tokens when priced (else without prices).
func budgetSetup(t *testing.T, srv *openaitest.Server, priced bool) (work, cfg string) {
	t.Helper()
	prices := ""
	if priced {
		prices = "    prices: {input: 1, output: 10}\n"
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": echoAgent, "s.md": "hi",
		"config.yaml": fmt.Sprintf("providers:\n  local:\n    type: openai-compatible\n    base_url: %s\n    api_key: test-key\n"+
			"models:\n  local:\n    provider: local\n    model: m\n%s", srv.BaseURL(), prices),
	})
	return dir, filepath.Join(dir, "config.yaml")
}

// echoStep is a response calling Echo, reporting 1000 tokens in and 100
// out: $0.002 at the setup's prices.
func echoStep(n int) openaitest.Response {
	return openaitest.Response{Text: []string{"echoing"}, ToolCalls: []openaitest.ToolCall{{Name: "Echo", Arguments: fmt.Sprintf(`{"text":"e%d"}`, n)}},
		Usage: &openaitest.Usage{PromptTokens: 1000, CompletionTokens: 100}}
}

// TestRunBudgets: --max-turns, --max-tokens and --max-budget-usd stop a
// one-shot run after the right model response with exit 4, the finished
// tool results saved in the session, a limit event and a result event
// saying why; a run within its limits succeeds with its cost; the
// session's totals are listed by `sessions`.
func TestRunBudgets(t *testing.T) {
	tests := []struct {
		name        string
		flags       []string
		responses   []openaitest.Response
		wantCode    int
		wantSubtype string
		wantReqs    int
		wantCost    float64
	}{
		{name: "max turns", flags: []string{"--max-turns", "2"}, responses: []openaitest.Response{echoStep(1), echoStep(2), echoStep(3)},
			wantCode: 4, wantSubtype: "error_max_turns", wantReqs: 2, wantCost: 0.004},
		{name: "max tokens", flags: []string{"--max-tokens", "2000"}, responses: []openaitest.Response{echoStep(1), echoStep(2), echoStep(3)},
			wantCode: 4, wantSubtype: "error_max_tokens", wantReqs: 2, wantCost: 0.004},
		{name: "max budget", flags: []string{"--max-budget-usd", "0.005"}, responses: []openaitest.Response{echoStep(1), echoStep(2), echoStep(3), echoStep(4)},
			wantCode: 4, wantSubtype: "error_max_budget_usd", wantReqs: 3, wantCost: 0.006},
		{name: "within the limits", flags: []string{"--max-turns", "3", "--max-budget-usd", "1"},
			responses: []openaitest.Response{echoStep(1), {Text: []string{"Done."}, Usage: &openaitest.Usage{PromptTokens: 1000, CompletionTokens: 100}}},
			wantCode:  0, wantSubtype: "success", wantReqs: 2, wantCost: 0.004},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tt.responses...)
			work, cfg := budgetSetup(t, srv, true)
			state := t.TempDir()
			env := []string{"XDG_STATE_HOME=" + state}
			args := append([]string{"--agent", filepath.Join(work, "agent.yaml"), "run", "--config", cfg, "--model", "local",
				"--output-format", "stream-json", "-p", "go"}, tt.flags...)
			r := runHostEnv(t, work, env, "", args...)
			if r.code != tt.wantCode || len(srv.Requests()) != tt.wantReqs {
				t.Fatalf("exit %d (want %d), %d requests (want %d)\nstdout %s\nstderr %s", r.code, tt.wantCode, len(srv.Requests()), tt.wantReqs, r.stdout, r.stderr)
			}
			evs := streamEvents(t, r.stdout)
			res := evs[len(evs)-1]
			if res["type"] != "result" || res["subtype"] != tt.wantSubtype || res["exit_code"] != float64(tt.wantCode) {
				t.Fatalf("result event %v", res)
			}
			if c, ok := res["total_cost_usd"].(float64); !ok || c < tt.wantCost-1e-9 || c > tt.wantCost+1e-9 {
				t.Fatalf("total_cost_usd %v, want %v", res["total_cost_usd"], tt.wantCost)
			}
			var limits, results int
			for _, ev := range evs {
				switch ev["type"] {
				case "limit":
					limits++
					if msg, _ := ev["message"].(string); !strings.Contains(msg, "Stopped") || "error_"+ev["reason"].(string) != tt.wantSubtype {
						t.Fatalf("limit event %v", ev)
					}
				case "tool_result":
					results++
				case "usage":
					if ev["cost_usd"] != 0.002 {
						t.Fatalf("usage event without its cost: %v", ev)
					}
				}
			}
			if (tt.wantCode == 4) != (limits == 1) {
				t.Fatalf("%d limit events", limits)
			}
			// The finished tool results are in the saved history.
			sid, _ := res["session_id"].(string)
			hist := readHistory(t, filepath.Join(state, "kosong-host", "sessions", sid, "history.jsonl"))
			var saved int
			for _, m := range hist {
				if m.Role == providers.RoleTool && strings.Contains(m.Text(), "e") {
					saved++
				}
			}
			if saved != results || (tt.wantCode == 4 && hist[len(hist)-1].Role != providers.RoleTool) {
				t.Fatalf("%d tool results saved, %d reported; last message %+v", saved, results, hist[len(hist)-1])
			}
			// The session's totals.
			ls := runHostEnv(t, work, env, "", "sessions", "--json")
			var rows []struct {
				Totals *session.Totals `json:"totals"`
			}
			if err := json.Unmarshal([]byte(ls.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Totals == nil {
				t.Fatalf("sessions --json: %v %s %s", err, ls.stdout, ls.stderr)
			}
			if tot := rows[0].Totals; tot.Turns != tt.wantReqs || tot.Total() != int64(1100*tt.wantReqs) || !tot.Priced ||
				tot.CostUSD < tt.wantCost-1e-9 || tot.CostUSD > tt.wantCost+1e-9 {
				t.Fatalf("totals %+v", tot)
			}
			text := runHostEnv(t, work, env, "", "sessions")
			if !strings.Contains(text.stdout, "TURNS") || !strings.Contains(text.stdout, fmt.Sprintf("$%.4f", tt.wantCost)) ||
				!strings.Contains(text.stdout, fmt.Sprint(1100*tt.wantReqs)) {
				t.Fatalf("sessions:\n%s", text.stdout)
			}
		})
	}
}

func readHistory(t *testing.T, path string) []providers.Message {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []providers.Message
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m providers.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestRunBudgetErrors: bad limits and a budget without prices are
// one-line errors naming the flag (or the model and the configuration
// key), exit 2, before any model request; text mode says why a run
// stopped on stderr and exits 4.
func TestRunBudgetErrors(t *testing.T) {
	tests := []struct {
		name   string
		priced bool
		flags  []string
		want   []string
	}{
		{name: "negative turns", priced: true, flags: []string{"--max-turns", "-1"}, want: []string{"--max-turns"}},
		{name: "turns not a number", priced: true, flags: []string{"--max-turns", "two"}, want: []string{"--max-turns"}},
		{name: "negative tokens", priced: true, flags: []string{"--max-tokens", "-5"}, want: []string{"--max-tokens"}},
		{name: "budget not a number", priced: true, flags: []string{"--max-budget-usd", "lots"}, want: []string{"--max-budget-usd"}},
		{name: "negative budget", priced: true, flags: []string{"--max-budget-usd", "-0.5"}, want: []string{"--max-budget-usd"}},
		{name: "budget without prices", flags: []string{"--max-budget-usd", "1"}, want: []string{"--max-budget-usd", "model m", "models.local.prices"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, echoStep(1))
			work, cfg := budgetSetup(t, srv, tt.priced)
			r := runHostEnv(t, work, nil, "", append([]string{"--agent", filepath.Join(work, "agent.yaml"), "run", "--config", cfg,
				"--model", "local", "-p", "go"}, tt.flags...)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(srv.Requests()) != 0 || len(lines) != 1 {
				t.Fatalf("exit %d, %d requests, stderr %q", r.code, len(srv.Requests()), r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
	t.Run("text mode", func(t *testing.T) {
		srv := openaitest.NewServer(t, echoStep(1), echoStep(2))
		work, cfg := budgetSetup(t, srv, false)
		r := runHostEnv(t, work, nil, "", "--agent", filepath.Join(work, "agent.yaml"), "run", "--config", cfg, "--model", "local",
			"-p", "go", "--max-turns", "1")
		if r.code != 4 || r.stdout != "" || !strings.Contains(r.stderr, "limit of 1 model turns (--max-turns)") || len(srv.Requests()) != 1 {
			t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// TestWireMaxTurns: run --wire --max-turns 1 ends the prompt with status
// max_turns after a LimitReached event saying so, the call's result kept.
func TestWireMaxTurns(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: s1, name: Shell, arguments: {command: "echo hi"}}
  - text: "Never."
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script, "--yolo", "--max-turns", "1")
	initWire(c)
	c.request("p1", "prompt", map[string]any{"user_input": "go"})
	c.event("ToolResult", func(map[string]any) bool { return true })
	c.event("LimitReached", func(p map[string]any) bool {
		return p["reason"] == "max_turns" && strings.Contains(fmt.Sprint(p["message"]), "--max-turns")
	})
	if r := c.response("p1"); fmt.Sprint(r["result"]) != "map[status:max_turns steps:1]" {
		t.Fatalf("prompt: %v", r)
	}
}
