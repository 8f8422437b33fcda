// Package media is ReadMediaFile: an image (or a video, where the model
// takes video input) read from disk and sent to the model as a media part.
// The tool learns from the host's Model capability whether the selected
// model takes image or video input, and is skipped at load when it takes
// neither.
package media

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // GIF dimensions
	_ "image/jpeg" // JPEG dimensions
	_ "image/png"  // PNG dimensions
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed read_media_file.md
var descriptions embed.FS

// Size limits: Kimi's 100 MB per media file, and what one message of the
// plugin wire (pluginrpc.MaxMessageBytes, 16 MB) leaves room for.
const (
	MaxBytes     = 100 << 20
	MaxWireBytes = 15 << 20
	sniffBytes   = 512
)

// Params are ReadMediaFile's arguments.
type Params struct {
	Path string `json:"path" minLength:"1" jsonschema:"The media file's path: relative to the working directory, or absolute."`
}

// ReadMediaFile reads images and videos for the model.
type ReadMediaFile struct {
	workDir      string
	image, video bool
}

// NewReadMediaFile constructs the tool from the host's Model (what input
// the model takes) and Environment (the working directory). A model known
// to take neither images nor videos skips the tool; a model whose
// capabilities the configuration does not declare is assumed to take
// images, as the providers assume.
func NewReadMediaFile(m pluginsdk.Model, env pluginsdk.Environment) (*ReadMediaFile, error) {
	t := &ReadMediaFile{workDir: env.WorkDir(), image: true}
	if m.CapabilitiesKnown() {
		t.image, t.video = m.Has(pluginsdk.ModelImageIn), m.Has(pluginsdk.ModelVideoIn)
		if !t.image && !t.video {
			name := m.Alias()
			if name == "" {
				name = m.Name()
			}
			return nil, pluginsdk.Skip(fmt.Sprintf("the model %s takes no image or video input (its capabilities list neither image_in nor video_in)", name))
		}
	}
	return t, nil
}

// kind sniffs a file's media type from its suffix and first bytes: the
// MIME type and "image", "video" or "text" ("" when it is none of them).
func kind(path string, head []byte) (mimeType, k string) {
	sniffed := http.DetectContentType(head)
	byExt := mime.TypeByExtension(strings.ToLower(filepath.Ext(path)))
	if i := strings.IndexByte(byExt, ';'); i >= 0 {
		byExt = byExt[:i]
	}
	switch {
	case strings.HasPrefix(sniffed, "image/"), strings.HasPrefix(sniffed, "video/"):
		mimeType = sniffed
	case strings.HasPrefix(byExt, "image/") || strings.HasPrefix(byExt, "video/"):
		if strings.HasPrefix(sniffed, "text/") && byExt != "image/svg+xml" {
			return sniffed, "text"
		}
		mimeType = byExt
	case strings.HasPrefix(sniffed, "text/"), utf8.Valid(head) && !bytes.ContainsRune(head, 0):
		return "text/plain", "text"
	default:
		return sniffed, ""
	}
	if i := strings.IndexByte(mimeType, ';'); i >= 0 {
		mimeType = mimeType[:i]
	}
	k, _, _ = strings.Cut(mimeType, "/")
	return mimeType, k
}

// resolve makes path absolute: a relative path is resolved against the
// working directory and must stay inside it.
func (t *ReadMediaFile) resolve(path string) (string, error) {
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	abs := filepath.Join(t.workDir, path)
	if rel, err := filepath.Rel(t.workDir, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("`%s` is outside the working directory. Use an absolute path to read a file outside it.", path)
	}
	return abs, nil
}

func fail(msg, brief string) pluginsdk.Result { return pluginsdk.Error(msg).WithBrief(brief) }

// Call reads the file and returns it as a media part between tags naming it.
func (t *ReadMediaFile) Call(_ context.Context, p Params) pluginsdk.Result {
	path, err := t.resolve(p.Path)
	if err != nil {
		return fail(err.Error(), "Outside the working directory")
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(fmt.Sprintf("`%s` does not exist.", p.Path), "File not found")
	case err != nil:
		return fail(fmt.Sprintf("Could not read `%s`: %v", p.Path, err), "Unreadable")
	case st.IsDir():
		return fail(fmt.Sprintf("`%s` is a directory, not a media file.", p.Path), "A directory")
	case st.Size() > MaxBytes:
		return fail(fmt.Sprintf("`%s` is %d bytes, which exceeds the max %dMB bytes for media files.", p.Path, st.Size(), MaxBytes>>20), "File too large")
	case st.Size() == 0:
		return fail(fmt.Sprintf("`%s` is empty.", p.Path), "Empty file")
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(fmt.Sprintf("Could not read `%s`: %v", p.Path, err), "Unreadable")
	}
	defer f.Close()
	head := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fail(fmt.Sprintf("Could not read `%s`: %v", p.Path, err), "Unreadable")
	}
	mimeType, k := kind(path, head[:n])
	switch {
	case k == "text":
		return fail(fmt.Sprintf("`%s` is a text file. Use ReadFile to read text files.", p.Path), "A text file")
	case k == "":
		return fail(fmt.Sprintf("`%s` is not an image or video file (%s).", p.Path, mimeType), "Not a media file")
	case k == "image" && !t.image:
		return fail("The current model does not support image input. Tell the user, or use other tools to learn about the file.", "No image input")
	case k == "video" && !t.video:
		return fail("The current model does not support video input. Tell the user, or use other tools to learn about the file.", "No video input")
	case k == "video":
		return fail(fmt.Sprintf("`%s` is a video: the model takes video input, but none of this host's providers can send video yet.", p.Path), "Video not supported")
	case st.Size() > MaxWireBytes:
		return fail(fmt.Sprintf("`%s` is %d bytes; this host sends media files of at most %dMB to the model. Make a smaller copy (e.g. scaled down) and read that.",
			p.Path, st.Size(), MaxWireBytes>>20), "File too large")
	}
	data := make([]byte, st.Size())
	copy(data, head[:n])
	if _, err := io.ReadFull(f, data[n:]); err != nil {
		return fail(fmt.Sprintf("Could not read `%s`: %v", p.Path, err), "Unreadable")
	}
	size := ""
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
		size = fmt.Sprintf(", original size %dx%dpx", cfg.Width, cfg.Height)
	}
	msg := fmt.Sprintf("Loaded %s file `%s` (%s, %d bytes%s).", k, p.Path, mimeType, len(data), size)
	if size != "" {
		msg += " Coordinates you give about this image refer to its original size in pixels."
	}
	return pluginsdk.OkParts(
		pluginsdk.TextPart(fmt.Sprintf("<%s path=%q>", k, p.Path)),
		pluginsdk.Part{MimeType: mimeType, Data: data},
		pluginsdk.TextPart(fmt.Sprintf("</%s>", k)),
	).WithMessage(msg).WithBrief(fmt.Sprintf("Loaded %s", filepath.Base(p.Path)))
}

func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[Params]("ReadMediaFile", "Read an image file.", NewReadMediaFile, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "read_media_file.md",
				map[string]int{"MaxMB": MaxBytes >> 20, "WireMB": MaxWireBytes >> 20})),
	}
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-media).
func Tools() []pluginsdk.Definition { return definitions() }
