package main_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// ReadMediaFile learns from the Model capability what the selected model
// alias takes: skipped for a text-only alias (capabilities without
// image_in), loaded for one with image_in.
func TestReadMediaFileFollowsTheModelAlias(t *testing.T) {
	tests := []struct {
		alias string
		want  bool
	}{
		{"textonly", false},
		{"seeing", true},
	}
	for _, tt := range tests {
		t.Run(tt.alias, func(t *testing.T) {
			var responses []openaitest.Response
			if tt.want {
				responses = append(responses, openaitest.Response{ToolCalls: []openaitest.ToolCall{
					{ID: "c1", Name: "ReadMediaFile", Arguments: `{"path": "dot.png"}`}}})
			}
			srv := openaitest.NewServer(t, append(responses, openaitest.Response{Text: []string{"Looked."}})...)
			config := fmt.Sprintf(`providers:
  local:
    type: openai-compatible
    base_url: %s
    api_key: test-key
models:
  textonly:
    provider: local
    model: text-model
    capabilities: [thinking]
  seeing:
    provider: local
    model: vision-model
    capabilities: [image_in]
`, srv.BaseURL())
			work := writeFiles(t, map[string]string{"config.yaml": config, "s.md": "hi",
				"dot.png": string(pngDot), "agent.yaml": "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"media\", \"echo:Echo\"]\n"})
			r := runHost(t, work, "", "--agent", "agent.yaml", "run", "--config", "config.yaml", "--model", tt.alias,
				"-p", "look", "--output-format", "stream-json")
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			first, _, _ := strings.Cut(r.stdout, "\n")
			var start struct{ Tools []string }
			if err := json.Unmarshal([]byte(first), &start); err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(start.Tools, "ReadMediaFile"); got != tt.want || !slices.Contains(start.Tools, "Echo") {
				t.Fatalf("tools with alias %s = %v, want ReadMediaFile %v", tt.alias, start.Tools, tt.want)
			}
			reqs := srv.Requests()
			if tt.want && (len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngDot))) {
				t.Fatalf("the image did not reach the model: %d requests", len(reqs))
			}
		})
	}
}

// pngDot is a 1x1 PNG.
var pngDot, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
