package main_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestACPImagePrompt: with a model that declares image_in the agent
// announces promptCapabilities.image and an image block (or an embedded
// image resource) reaches the model as an image part; with a model that
// does not, image is false and an image prompt is refused, naming the block.
func TestACPImagePrompt(t *testing.T) {
	png := base64.StdEncoding.EncodeToString(pngDot)
	tests := []struct {
		name, capabilities string
		images             bool
	}{
		{"image_in", "image_in", true},
		{"text only", "thinking", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"A dot."}}, openaitest.Response{Text: []string{"Again."}})
			dir, env := t.TempDir(), emptyEnv(t)
			cfgDir := strings.TrimPrefix(env[2], "XDG_CONFIG_HOME=")
			if err := os.MkdirAll(filepath.Join(cfgDir, "kosong-host"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cfgDir, "kosong-host", "config.yaml"), []byte(openaiConfig(srv, tt.capabilities)), 0o600); err != nil {
				t.Fatal(err)
			}
			c := startACP(t, dir, env, "--model", "local")
			init := c.initialize()
			if init.AgentCapabilities.PromptCapabilities.Image != tt.images || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext {
				t.Fatalf("promptCapabilities %+v, want image %v", init.AgentCapabilities.PromptCapabilities, tt.images)
			}
			sess := c.newSession(dir)
			res, err := c.conn.Prompt(c.ctx(), acp.PromptRequest{SessionId: sess.SessionId,
				Prompt: []acp.ContentBlock{acp.TextBlock("What is this?"), acp.ImageBlock(png, "image/png")}})
			if !tt.images {
				if err == nil || !strings.Contains(err.Error(), "prompt[1]: the model does not take images") {
					t.Fatalf("an image prompt to a text-only model: %+v %v", res, err)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Fatalf("%d requests reached the model", n)
				}
				return
			}
			if err != nil || res.StopReason != acp.StopReasonEndTurn {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			res, err = c.conn.Prompt(c.ctx(), acp.PromptRequest{SessionId: sess.SessionId,
				Prompt: []acp.ContentBlock{acp.TextBlock("And this file?"), acp.ResourceBlock(acp.EmbeddedResourceResource{
					BlobResourceContents: &acp.BlobResourceContents{Uri: "file://" + dir + "/dot.png", Blob: png, MimeType: acp.Ptr("image/png")}})}})
			if err != nil || res.StopReason != acp.StopReasonEndTurn {
				t.Fatalf("prompt with an embedded image: %+v %v", res, err)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			for i, r := range reqs {
				msgs := r.Chat.Messages
				last := msgs[len(msgs)-1]
				if last.Role != "user" || !strings.Contains(string(r.Body), `"image_url"`) ||
					strings.Count(string(r.Body), "data:image/png;base64,"+png) != i+1 {
					t.Errorf("request %d lacks the image part:\n%s", i, r.Body)
				}
			}
		})
	}
}

// openaiConfig is a configuration file with one model alias, "local", on
// the fake server srv.
func openaiConfig(srv *openaitest.Server, capabilities string) string {
	return fmt.Sprintf("providers:\n  local:\n    type: openai-compatible\n    base_url: %s\n    api_key: test-key\n"+
		"models:\n  local:\n    provider: local\n    model: m\n    capabilities: [%s]\n", srv.BaseURL(), capabilities)
}
