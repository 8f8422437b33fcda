package providers_test

import (
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

func TestWithoutImages(t *testing.T) {
	img := providers.ContentPart{Type: providers.PartImage, ImageURL: "data:image/png;base64,AAAA"}
	history := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("look")}},
		{Role: providers.RoleTool, ToolCallID: "c1", Content: []providers.ContentPart{providers.TextPart("shot"), img}},
	}
	out := providers.WithoutImages(history)
	if len(out) != 2 || out[0].Text() != "look" || out[1].ToolCallID != "c1" {
		t.Fatalf("history %+v", out)
	}
	if got := out[1].Content; len(got) != 2 || got[0].Text != "shot" || got[1] != providers.TextPart(providers.ImagePlaceholder) {
		t.Errorf("tool content %+v, want the text and the placeholder", got)
	}
	if history[1].Content[1] != img {
		t.Error("the history given was changed")
	}
	plain := history[:1]
	if got := providers.WithoutImages(plain); &got[0] != &plain[0] {
		t.Error("a history without images was copied")
	}
}

func TestJoinText(t *testing.T) {
	parts := []providers.ContentPart{providers.TextPart("a"), {Type: providers.PartImage, ImageURL: "x"}, providers.TextPart("b"), providers.TextPart("")}
	if got := providers.JoinText(parts); got != "a\nb" {
		t.Errorf("JoinText = %q, want %q", got, "a\nb")
	}
	if got := providers.JoinText(nil); got != "" {
		t.Errorf("JoinText(nil) = %q", got)
	}
}
