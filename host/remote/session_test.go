package remote

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers"
)

// TestMessage: a message's text parts are joined and its images sent as
// base64; an image by URL, or whose data is not base64, is refused.
func TestMessage(t *testing.T) {
	img := providers.ContentPart{Type: providers.PartImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="}
	m, err := message([]providers.ContentPart{providers.TextPart("look"), img, providers.TextPart("at this")})
	if err != nil || m.Text != "look\n\nat this" || len(m.Images) != 1 || m.Images[0].MimeType != "image/png" || m.Images[0].Data != "iVBORw0KGgo=" {
		t.Fatalf("message %+v, %v", m, err)
	}
	for _, bad := range []struct{ url, want string }{
		{"https://example.com/a.png", "as data, not as a URL"},
		{"data:image/png;base64,!!!", "not base64"},
		{"data:image/png,plain", "as data, not as a URL"},
	} {
		_, err := message([]providers.ContentPart{{Type: providers.PartImage, ImageURL: bad.url}})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.url, err, bad.want)
		}
	}
}

// TestDecisionAndAnsweredText: the answers map onto the API's decisions,
// and another client's answer is told in words.
func TestDecisionAndAnsweredText(t *testing.T) {
	if decision(approval.Approve) != serverclient.DecisionOnce || decision(approval.ApproveForSession) != serverclient.DecisionSession ||
		decision(approval.Reject) != serverclient.DecisionReject {
		t.Error("decisions")
	}
	tests := []struct {
		e    requestAnsweredEvent
		want string
	}{
		{requestAnsweredEvent{Kind: "approval", Decision: "once"}, "approved once by another client"},
		{requestAnsweredEvent{Kind: "approval", Decision: "session"}, "approved for the session by another client"},
		{requestAnsweredEvent{Kind: "approval", Decision: "reject", Feedback: "no"}, "rejected by another client: no"},
		{requestAnsweredEvent{Kind: "approval", Decision: "reject"}, "rejected by another client"},
		{requestAnsweredEvent{Kind: "approval", Decision: "cancelled"}, "the approval request was withdrawn: its turn ended"},
		{requestAnsweredEvent{Kind: "question", Dismissed: true}, "the question was dismissed by another client"},
		{requestAnsweredEvent{Kind: "question"}, "the question was answered by another client"},
	}
	for _, tt := range tests {
		if got := answeredText(tt.e); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}
