package temporalengine

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.temporal.io/sdk/client"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// markerTool is Noop answering a marker text.
type markerTool struct{ text string }

func (m markerTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Noop", Description: "Answers a marker.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (m markerTool) Call(context.Context, string, json.RawMessage) toolset.Result {
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart(m.text)}}
}

func writeKey(t *testing.T, name string, key []byte, encode func([]byte) string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(encode(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func raw(b []byte) string { return string(b) }

func TestReadPayloadKey(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	dir := t.TempDir()
	tests := []struct {
		name    string
		content []byte
		want    string // error ("" none)
	}{
		{"raw", key, ""},
		{"hex with a newline", []byte(hex.EncodeToString(key) + "\n"), ""},
		{"base64", []byte("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"), ""},
		{"short", []byte("abc"), "3 bytes: want a 32-byte key"},
		{"hex of 16 bytes (32 characters)", []byte(hex.EncodeToString(key[:16])), "32 bytes: want a 32-byte key"},
		{"32 printable characters", []byte(strings.Repeat("k", 32)), "32 bytes: want a 32-byte key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := ReadPayloadKey(path)
			switch {
			case tt.want == "" && (err != nil || k.ID() != keyID(key)):
				t.Fatalf("key %v, %v", k, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path)):
				t.Fatalf("error %v, want %q naming %s", err, tt.want, path)
			}
		})
	}
	if _, err := ReadPayloadKey(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing: no such file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestPayloadEncryption runs a session on the real dev server with
// encrypted payloads: the raw workflow history holds neither the
// prompt's nor the tool output's text; a client without the key, or with
// another, fails with a one-line error saying so.
func TestPayloadEncryption(t *testing.T) {
	const prompt, output = "prompt-marker-5f1c", "tool-output-marker-9a2e"
	keyFile := writeKey(t, "key", bytes.Repeat([]byte{1}, 32), hex.EncodeToString)
	otherFile := writeKey(t, "other.key", bytes.Repeat([]byte{2}, 32), raw)
	key, err := ReadPayloadKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ReadPayloadKey(otherFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := temporaltest.Start(t)
	dial := func(k *PayloadKey) client.Client {
		c, err := client.Dial(client.Options{HostPort: srv.HostPort, Namespace: temporaltest.Namespace, Logger: quietLogger{},
			DataConverter: NewDataConverter(k), FailureConverter: NewFailureConverter(k)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	c := dial(key)
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) {
		ts := toolset.New(hclog.NewNullLogger())
		if err := ts.Add(markerTool{text: output}); err != nil {
			return nil, err
		}
		return &hosted{ts: ts}, nil
	})
	startTestWorker(t, c, acts)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Turn(ctx, prompt)
	if err != nil || res.Steps != 2 || res.Reason != loop.StopDone {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if h := strings.Join(texts(s.History()), "|"); !strings.Contains(h, prompt) || !strings.Contains(h, output) {
		t.Fatalf("the history read with the key: %q", h)
	}

	// Clients without the key, or with another one.
	tests := []struct {
		name string
		key  *PayloadKey
		want []string
	}{
		{"no key", nil, []string{"encrypted (key id " + key.ID() + ")", "--payload-key"}},
		{"another key", other, []string{"key id " + key.ID(), otherFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Attach(dial(tt.key), s.ID()).history(ctx)
			if err == nil {
				t.Fatal("the history was read")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q, want one line with %q", err, w)
				}
			}
		})
	}

	s.Close()
	all, events := rawHistory(ctx, t, c, s.WorkflowID())
	if events < 10 || !bytes.Contains(all, []byte(encodingEncrypted)) {
		t.Fatalf("the raw history (%d events) has no encrypted payload", events)
	}
	for _, m := range []string{prompt, output} {
		if bytes.Contains(all, []byte(m)) {
			t.Errorf("the raw workflow history holds %q in the clear", m)
		}
	}
}
