package main_test

import (
	"strings"
	"testing"
)

// TestReloadAddsPluginBetweenSteps: with --watch-agent, the first step's
// Shell call rewrites agent.yaml to add the echo plugin; before the second
// step of the same turn the agent is reloaded (shell kept running, echo
// started), so the second step's Echo call runs.
func TestReloadAddsPluginBetweenSteps(t *testing.T) {
	two := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\", \"echo:Echo\"]\n"
	script := `turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "cp agent2.yaml agent.yaml"}}]
  - tool_calls: [{id: c2, name: Echo, arguments: {text: reloaded}}]
  - text: done
`
	work := writeFiles(t, map[string]string{"agent.yaml": guardAgent, "agent2.yaml": two, "s.md": "hi", "script.yaml": script})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--watch-agent",
		"--output-format", "stream-json", "-p", "Add echo.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	reloads := eventsOfType(evs, "reload")
	if len(reloads) != 1 || join(reloads[0]["started"]) != "echo" || join(reloads[0]["kept"]) != "shell" || reloads[0]["error"] != nil {
		t.Fatalf("reload events %v", reloads)
	}
	res := eventsOfType(evs, "tool_result")
	if len(res) != 2 || res[1]["name"] != "Echo" || res[1]["status"] != "ok" || res[1]["output"] != "reloaded" {
		t.Fatalf("tool results %v", res)
	}
	// The reload came between the steps: after step 1's result, before step 2.
	var order []string
	for _, ev := range evs {
		switch ev["type"] {
		case "tool_result", "reload", "step_start":
			order = append(order, ev["type"].(string))
		}
	}
	if strings.Join(order, ",") != "step_start,tool_result,reload,step_start,tool_result,step_start" {
		t.Fatalf("event order %v", order)
	}
}

// TestReloadSyntaxErrorKeepsTools: an edit that breaks agent.yaml is
// reported and the old toolset stays: the next step's Shell call runs.
func TestReloadSyntaxErrorKeepsTools(t *testing.T) {
	script := `turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "printf 'version: 1\\nagent: [broken\\n' > agent.yaml"}}]
  - tool_calls: [{id: c2, name: Shell, arguments: {command: "echo still-here"}}]
  - text: done
`
	work := writeFiles(t, map[string]string{"agent.yaml": guardAgent, "s.md": "hi", "script.yaml": script})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--watch-agent",
		"--output-format", "stream-json", "-p", "Break it.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	reloads := eventsOfType(evs, "reload")
	if len(reloads) != 1 || !strings.Contains(reloads[0]["error"].(string), "Invalid YAML in agent spec file") {
		t.Fatalf("reload events %v", reloads)
	}
	res := eventsOfType(evs, "tool_result")
	if len(res) != 2 || res[1]["status"] != "ok" || strings.TrimSpace(res[1]["output"].(string)) != "still-here" {
		t.Fatalf("tool results %v", res)
	}
}

func join(v any) string {
	list, _ := v.([]any)
	var s []string
	for _, e := range list {
		s = append(s, e.(string))
	}
	return strings.Join(s, ",")
}

// TestReplReload: /reload at the prompt loads the edited agent.yaml; the
// next turn's Echo call runs.
func TestReplReload(t *testing.T) {
	two := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\", \"echo:Echo\"]\n"
	script := `turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "cp agent2.yaml agent.yaml"}}]
  - text: edited
  - tool_calls: [{id: c2, name: Echo, arguments: {text: via-reload}}]
  - text: done
`
	work := writeFiles(t, map[string]string{"agent.yaml": guardAgent, "agent2.yaml": two, "s.md": "hi", "script.yaml": script})
	input := "edit the agent\n/reload\nuse echo\nexit\n"
	r := runHost(t, work, input, "run", "-i", "--yolo", "--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	if reloads := eventsOfType(evs, "reload"); len(reloads) != 1 || join(reloads[0]["started"]) != "echo" {
		t.Fatalf("reload events %v", reloads)
	}
	res := eventsOfType(evs, "tool_result")
	if len(res) != 2 || res[1]["status"] != "ok" || res[1]["output"] != "via-reload" {
		t.Fatalf("tool results %v", res)
	}
}
