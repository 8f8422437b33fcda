package media

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata/")

func TestSchemasGolden(t *testing.T) { plugintest.CheckSchemas(t, *update, definitions()...) }

func model(caps ...string) *plugintest.ModelInfo {
	return &plugintest.ModelInfo{Provider: "openai", Name: "gpt-test", Alias: "test", Capabilities: caps, CapabilitiesKnown: true}
}

func TestSkippedByModel(t *testing.T) {
	tests := []struct {
		name   string
		model  *plugintest.ModelInfo
		want   plugintest.Status
		reason string
	}{
		{"text-only model", model("thinking"), plugintest.Skipped, "the model test takes no image or video input"},
		{"image model", model("image_in"), plugintest.Loaded, ""},
		{"video model", model("video_in"), plugintest.Loaded, ""},
		{"capabilities unknown", &plugintest.ModelInfo{Name: "m"}, plugintest.Loaded, ""},
		{"host without Model", nil, plugintest.Skipped, "does not say which model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, loads := plugintest.Load(t, plugintest.Options{Model: tt.model}, definitions()...)
			if len(loads) != 1 || loads[0].Status != tt.want || !strings.Contains(loads[0].Reason, tt.reason) {
				t.Fatalf("loads = %+v, want %s %q", loads, tt.want, tt.reason)
			}
		})
	}
}

func pngBytes(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadImage(t *testing.T) {
	work := t.TempDir()
	data := pngBytes(t, 3, 2)
	if err := os.WriteFile(filepath.Join(work, "shot.png"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := plugintest.New(t, plugintest.Options{WorkDir: work, Model: model("image_in")}, definitions()...)
	r := h.MustCall(t, "ReadMediaFile", `{"path": "shot.png"}`)
	if r.Kind != pluginsdk.KindOk || len(r.Output) != 3 {
		t.Fatalf("result = %+v", r)
	}
	if r.Output[0].Text != `<image path="shot.png">` || r.Output[2].Text != "</image>" ||
		r.Output[1].MimeType != "image/png" || !bytes.Equal(r.Output[1].Data, data) {
		t.Fatalf("parts = %+v", r.Output)
	}
	if want := fmt.Sprintf("Loaded image file `shot.png` (image/png, %d bytes, original size 3x2px).", len(data)); !strings.HasPrefix(r.Message, want) {
		t.Fatalf("message = %q, want %q", r.Message, want)
	}
}

// Bad input: a 200 MB file (sparse), a text file and the rest, each a
// one-line error naming the file.
func TestBadInput(t *testing.T) {
	work := t.TempDir()
	big, err := os.Create(filepath.Join(work, "big.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	big.Close()
	wire, err := os.Create(filepath.Join(work, "wire.png"))
	if err != nil {
		t.Fatal(err)
	}
	wire.Write(pngBytes(t, 1, 1))
	if err := wire.Truncate(20 << 20); err != nil {
		t.Fatal(err)
	}
	wire.Close()
	files := map[string][]byte{"notes.txt": []byte("just some text\n"), "fake.png": []byte("not an image, only text\n"),
		"empty.png": nil, "clip.mp4": append([]byte("\x00\x00\x00\x18ftypmp42"), make([]byte, 64)...), "blob.bin": {0, 1, 2, 3, 0xff},
		"shot.png": pngBytes(t, 1, 1)}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(work, "dir"), 0o755)
	imageOnly := plugintest.New(t, plugintest.Options{WorkDir: work, Model: model("image_in")}, definitions()...)
	videoOnly := plugintest.New(t, plugintest.Options{WorkDir: work, Model: model("video_in")}, definitions()...)
	tests := []struct {
		name string
		h    *plugintest.Harness
		path string
		want string
	}{
		{"200 MB", imageOnly, "big.png", fmt.Sprintf("`big.png` is %d bytes, which exceeds the max 100MB bytes for media files.", 200<<20)},
		{"text file", imageOnly, "notes.txt", "`notes.txt` is a text file. Use ReadFile to read text files."},
		{"text with an image suffix", imageOnly, "fake.png", "`fake.png` is a text file. Use ReadFile to read text files."},
		{"empty", imageOnly, "empty.png", "`empty.png` is empty."},
		{"missing", imageOnly, "nope.png", "`nope.png` does not exist."},
		{"directory", imageOnly, "dir", "`dir` is a directory, not a media file."},
		{"outside the work dir", imageOnly, "../x.png", "`../x.png` is outside the working directory. Use an absolute path to read a file outside it."},
		{"not media", imageOnly, "blob.bin", "`blob.bin` is not an image or video file (application/octet-stream)."},
		{"over the wire limit", imageOnly, "wire.png", fmt.Sprintf("`wire.png` is %d bytes; this host sends media files of at most 15MB", 20<<20)},
		{"video without video input", imageOnly, "clip.mp4", "The current model does not support video input."},
		{"image without image input", videoOnly, "shot.png", "The current model does not support image input."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.h.MustCall(t, "ReadMediaFile", fmt.Sprintf(`{"path": %q}`, tt.path))
			if r.Kind != pluginsdk.KindError || !strings.HasPrefix(r.Message, tt.want) || strings.Contains(r.Message, "\n") {
				t.Fatalf("result = %+v, want an error starting %q", r, tt.want)
			}
		})
	}
}
