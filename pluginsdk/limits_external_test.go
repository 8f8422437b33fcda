package pluginsdk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type mbParams struct {
	MB int `json:"mb"`
}

// TestMessageLimitsAgree: the harness's connections have the host's message
// limit: an approval request of 6 MB (over gRPC's 4 MB default) reaches the
// host's capability server, and a result over limits.MessageBytes fails as
// it fails in kosong-host.
func TestMessageLimitsAgree(t *testing.T) {
	edit := pluginsdk.NewTool[mbParams]("Edit", "Asks approval of an edit of MB megabytes.",
		func(a pluginsdk.Approval) (pluginsdk.HandlerFunc[mbParams], error) {
			return func(ctx context.Context, p mbParams) pluginsdk.Result {
				text := strings.Repeat("x", p.MB<<20/2)
				d, err := a.Request(ctx, "edit", "Edit big.json", pluginsdk.Diff("big.json", text, text+"y"))
				if err != nil {
					return pluginsdk.Error(err.Error())
				}
				if !d.Approved {
					return pluginsdk.Rejected(d.Feedback)
				}
				return pluginsdk.Ok("edited")
			}, nil
		})
	image := pluginsdk.NewTool[mbParams]("Image", "Returns an image of MB megabytes.",
		func() (pluginsdk.HandlerFunc[mbParams], error) {
			return func(_ context.Context, p mbParams) pluginsdk.Result {
				return pluginsdk.OkParts(pluginsdk.Part{MimeType: "image/png", Data: make([]byte, p.MB<<20)})
			}, nil
		})
	h := plugintest.New(t, plugintest.Options{}, edit, image)
	if r := h.MustCall(t, "Edit", `{"mb":6}`); r.Text() != "edited" {
		t.Fatalf("a 6 MB approval request: %+v", r)
	}
	if r := h.MustCall(t, "Image", `{"mb":15}`); len(r.Output) != 1 || len(r.Output[0].Data) != 15<<20 {
		t.Fatalf("a 15 MB image: %d parts", len(r.Output))
	}
	_, err := h.Call(context.Background(), "Image", `{"mb":17}`)
	if err == nil || !strings.Contains(err.Error(), "message larger than max") || !strings.Contains(err.Error(), fmt.Sprintf("vs. %d)", limits.MessageBytes)) {
		t.Fatalf("a 17 MB image: %v", err)
	}
}
