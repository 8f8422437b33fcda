package mcpclient

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/providers"
)

// MaxImageBytes caps the image data of one result, as a plugin's each
// image is capped (limits.ImageBytes): an image past it is replaced by a
// line saying so.
const MaxImageBytes = limits.ImageBytes

// OutputBudget is how many characters of text a call's output may have;
// the rest is cut, marked TruncatedMarker. Images do not count.
const OutputBudget = 100_000

// The texts of results.
const (
	TruncatedMarker  = "[...truncated]"
	truncatedMessage = "Output is truncated to fit in the message."
	// ErrorMessage is the message of an isError result; its content is the output.
	ErrorMessage = "Tool returned an error. The output may be error message or incomplete output"
)

// convert maps a tools/call result to a toolset result.
func convert(res *mcp.CallToolResult) toolset.Result {
	parts := make([]providers.ContentPart, 0, len(res.Content))
	images := 0
	for _, c := range res.Content {
		p := contentPart(c)
		if p.Type == providers.PartImage {
			if images+len(p.ImageURL) > maxImageURL {
				_, payload, _ := strings.Cut(p.ImageURL, ",")
				p = providers.TextPart(fmt.Sprintf("[image of %d bytes left out: a result's images may have at most %d MB]",
					base64.StdEncoding.DecodedLen(len(payload)), MaxImageBytes>>20))
			} else {
				images += len(p.ImageURL)
			}
		}
		parts = append(parts, p)
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, providers.TextPart(string(b)))
		}
	}
	parts, truncated := budget(parts, OutputBudget)
	r := toolset.Result{Kind: toolset.Ok, Output: parts}
	if res.IsError {
		r.Kind, r.Message, r.Brief = toolset.Failed, ErrorMessage, "Tool error"
		if truncated {
			r.Message += ". " + truncatedMessage
		}
	} else if truncated {
		r.Message = truncatedMessage
	}
	return r
}

func contentPart(c mcp.Content) providers.ContentPart {
	switch c := c.(type) {
	case *mcp.TextContent:
		return providers.TextPart(c.Text)
	case *mcp.ImageContent:
		return imagePart(c.MIMEType, c.Data)
	case *mcp.AudioContent:
		return providers.TextPart(fmt.Sprintf("[audio: %s, %d bytes; audio is not passed to the model]", orUnknown(c.MIMEType), len(c.Data)))
	case *mcp.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link: %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(&b, ", name %q", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, ", %s", c.MIMEType)
		}
		if c.Size != nil {
			fmt.Fprintf(&b, ", %d bytes", *c.Size)
		}
		if c.Description != "" {
			fmt.Fprintf(&b, ": %s", c.Description)
		}
		b.WriteString("]")
		return providers.TextPart(b.String())
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return providers.TextPart("[embedded resource: empty]")
		}
		if r.Blob != nil && strings.HasPrefix(r.MIMEType, "image/") {
			return imagePart(r.MIMEType, r.Blob)
		}
		if r.Blob != nil && textual(r.MIMEType) && utf8.Valid(r.Blob) {
			return providers.TextPart("[embedded resource: " + r.URI + ", " + r.MIMEType + "]\n" + string(r.Blob))
		}
		if r.Blob != nil {
			return providers.TextPart(fmt.Sprintf("[embedded resource: %s, %s, %d bytes of binary data]", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
		}
		head := "[embedded resource: " + r.URI
		if r.MIMEType != "" {
			head += ", " + r.MIMEType
		}
		return providers.TextPart(head + "]\n" + r.Text)
	case nil:
		return providers.TextPart("")
	}
	return providers.TextPart(fmt.Sprintf("[unsupported content: %T]", c))
}

// maxImageURL is MaxImageBytes as data URL characters (base64 and header).
var maxImageURL = base64.StdEncoding.EncodedLen(MaxImageBytes) + 64

// textual reports whether a blob of this MIME type is text: text/*, JSON,
// XML, YAML, JavaScript and the like.
func textual(mime string) bool {
	mime, _, _ = strings.Cut(strings.ToLower(mime), ";")
	mime = strings.TrimSpace(mime)
	switch {
	case strings.HasPrefix(mime, "text/"):
		return true
	case strings.HasSuffix(mime, "+json"), strings.HasSuffix(mime, "+xml"), strings.HasSuffix(mime, "+yaml"):
		return true
	}
	switch mime {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/javascript",
		"application/x-sh", "application/toml", "application/sql", "application/graphql":
		return true
	}
	return false
}

func imagePart(mime string, data []byte) providers.ContentPart {
	if mime == "" {
		mime = "image/png"
	}
	return providers.ContentPart{Type: providers.PartImage, ImageURL: providers.DataURL(mime, data)}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// budget keeps the first max characters of text of parts: the part where
// the budget runs out is cut and ends with TruncatedMarker, later parts are
// dropped.
func budget(parts []providers.ContentPart, max int) ([]providers.ContentPart, bool) {
	left := max
	for i, p := range parts {
		if p.Type != providers.PartText {
			continue
		}
		n := utf8.RuneCountInString(p.Text)
		if n <= left {
			left -= n
			continue
		}
		cut := string([]rune(p.Text)[:left])
		out := append(parts[:i:i], providers.TextPart(cut+TruncatedMarker))
		return out, true
	}
	return parts, false
}
