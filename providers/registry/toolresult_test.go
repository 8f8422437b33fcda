package registry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/openaitest"
	"github.com/kosong-host/kosong-host/providers/registry"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\nfake")

// imageHistory: a step whose first call's result has two text parts and an
// image, and whose second call's result is text.
func imageHistory(ids [2]string) []providers.Message {
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes)
	return []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("Take a screenshot.")}},
		{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{
			{ID: ids[0], Name: "Screenshot", Arguments: `{}`},
			{ID: ids[1], Name: "Now", Arguments: `{}`},
		}},
		{Role: providers.RoleTool, ToolCallID: ids[0], Content: []providers.ContentPart{
			providers.TextPart("Captured at 6:33:36 AM"), providers.TextPart("You can access the file."),
			{Type: providers.PartImage, ImageURL: img},
		}},
		{Role: providers.RoleTool, ToolCallID: ids[1], Content: []providers.ContentPart{providers.TextPart("noon")}},
	}
}

func send(t *testing.T, p providers.ChatProvider, history []providers.Message) {
	t.Helper()
	s, err := p.Stream(context.Background(), providers.Request{History: history})
	if err != nil {
		t.Fatal(err)
	}
	if r := streamtest.Drain(s, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
}

const joined = "Captured at 6:33:36 AM\nYou can access the file."

type openAIPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func openAIParts(t *testing.T, m openaitest.Message) []openAIPart {
	t.Helper()
	var parts []openAIPart
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		t.Fatalf("content %s is not a list of parts: %v", m.Content, err)
	}
	return parts
}

// TestToolResultWithImagesOpenAI: the tool messages carry text only (the
// parts joined by newlines, and a note that the image follows); the images
// follow the step's tool messages in one user message.
func TestToolResultWithImagesOpenAI(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}})
	p, err := openaicompat.New(openaicompat.Config{Name: "openai", BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	send(t, p, imageHistory([2]string{"call_a", "call_b"}))
	msgs := srv.LastRequest(t).Chat.Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool,user" {
		t.Fatalf("roles %v, want user,assistant,tool,tool,user", roles)
	}
	var first string
	if err := json.Unmarshal(msgs[2].Content, &first); err != nil {
		t.Fatalf("tool message content %s is not a string: %v", msgs[2].Content, err)
	}
	if !strings.HasPrefix(first, joined+"\n") || !strings.Contains(first, "1 image") || !strings.Contains(first, "user message") {
		t.Errorf("tool message %q: want the texts joined by a newline, then a note that the image follows", first)
	}
	if msgs[3].Text() != "noon" || msgs[2].ToolCallID != "call_a" || msgs[3].ToolCallID != "call_b" {
		t.Errorf("tool messages %+v %+v", msgs[2], msgs[3])
	}
	parts := openAIParts(t, msgs[4])
	if len(parts) != 2 || parts[0].Type != "text" || !strings.Contains(parts[0].Text, "call_a") ||
		parts[1].Type != "image_url" || parts[1].ImageURL == nil || !strings.HasPrefix(parts[1].ImageURL.URL, "data:image/png;base64,") {
		t.Fatalf("image message %s: want a text naming call_a, then the image", msgs[4].Content)
	}
}

// TestToolResultWithImagesAnthropic: the image goes inside the tool_result,
// beside its two text blocks.
func TestToolResultWithImagesAnthropic(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "k", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	send(t, p, imageHistory([2]string{"toolu_a", "toolu_b"}))
	msgs := srv.LastRequest(t).Messages.Messages
	if len(msgs) != 3 || msgs[2].Role != "user" || len(msgs[2].Content) != 2 {
		t.Fatalf("messages %+v: want the two results in one user message", msgs)
	}
	res := msgs[2].Content[0]
	var blocks []struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	if res.Type != "tool_result" || res.ToolUseID != "toolu_a" || json.Unmarshal(res.Content, &blocks) != nil {
		t.Fatalf("first result %+v", res)
	}
	if len(blocks) != 3 || blocks[0].Text != "Captured at 6:33:36 AM" || blocks[1].Text != "You can access the file." ||
		blocks[2].Type != "image" || blocks[2].Source.MediaType != "image/png" || blocks[2].Source.Data != base64.StdEncoding.EncodeToString(pngBytes) {
		t.Errorf("result blocks %+v: want two texts and the image", blocks)
	}
}

// TestToolResultWithImagesGoogle: the texts joined by a newline are the
// function response's output; the image is its inline part.
func TestToolResultWithImagesGoogle(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"ok"}})
	p, err := google.New(google.Config{BaseURL: srv.BaseURL(), APIKey: "k", Model: "gemini-2.5-flash", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	send(t, p, imageHistory([2]string{"Screenshot:0", "Now:1"}))
	contents := srv.LastRequest(t).Generate.Contents
	if len(contents) != 3 || contents[2].Role != "user" || len(contents[2].Parts) != 2 {
		t.Fatalf("contents %+v: want the two responses in one user content", contents)
	}
	fr := contents[2].Parts[0].FunctionResponse
	if fr == nil || fr.Name != "Screenshot" || fr.Response["output"] != joined {
		t.Fatalf("function response %+v: want output %q", fr, joined)
	}
	if len(fr.Parts) != 1 || fr.Parts[0].InlineData == nil || fr.Parts[0].InlineData.MIMEType != "image/png" || string(fr.Parts[0].InlineData.Data) != string(pngBytes) {
		t.Errorf("function response parts %+v: want the PNG inline", fr.Parts)
	}
}

// TestImagePlaceholderWithoutImageIn: a model alias that declares
// capabilities without image_in gets a text placeholder instead of the
// image, on every provider; one that declares image_in gets the image.
func TestImagePlaceholderWithoutImageIn(t *testing.T) {
	oai := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}}, openaitest.Response{Text: []string{"ok"}})
	ant := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}},
		anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	gem := googletest.NewServer(t, googletest.Response{Text: []string{"ok"}}, googletest.Response{Text: []string{"ok"}})
	cfg := `
providers:
  oai: {type: openai-compatible, base_url: "` + oai.BaseURL() + `"}
  ant: {type: anthropic, base_url: "` + ant.BaseURL() + `", api_key: k}
  gem: {type: google, base_url: "` + gem.BaseURL() + `", api_key: k}
models:
  oai-text: {provider: oai, model: m, capabilities: []}
  oai-vision: {provider: oai, model: m, capabilities: [image_in]}
  ant-text: {provider: ant, model: m, capabilities: [thinking]}
  ant-vision: {provider: ant, model: m, capabilities: [image_in]}
  gem-text: {provider: gem, model: gemini-2.5-flash, capabilities: [thinking]}
  gem-vision: {provider: gem, model: gemini-2.5-flash}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	write(t, path, cfg)
	bodies := map[string]func() string{
		"oai": func() string { return string(oai.LastRequest(t).Body) },
		"ant": func() string { return string(ant.LastRequest(t).Body) },
		"gem": func() string { return string(gem.LastRequest(t).Body) },
	}
	png := base64.StdEncoding.EncodeToString(pngBytes)
	placeholder, _ := json.Marshal(providers.ImagePlaceholder)
	for _, prov := range []string{"oai", "ant", "gem"} {
		for _, vision := range []bool{false, true} {
			alias := prov + "-text"
			if vision {
				alias = prov + "-vision"
			}
			t.Run(alias, func(t *testing.T) {
				p, err := registry.New(registry.Options{Model: alias, ConfigPath: path, WorkDir: dir, Getenv: envOf(nil)})
				if err != nil {
					t.Fatal(err)
				}
				send(t, p, imageHistory([2]string{"Screenshot:0", "Now:1"}))
				body := bodies[prov]()
				hasImage, hasPlaceholder := strings.Contains(body, png), strings.Contains(body, string(placeholder[1:len(placeholder)-1]))
				if hasImage != vision || hasPlaceholder == vision {
					t.Errorf("image sent %v, placeholder sent %v; want the image only with image_in:\n%s", hasImage, hasPlaceholder, body)
				}
			})
		}
	}
}
