package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// FetchParams are FetchURL's arguments.
type FetchParams struct {
	URL string `json:"url" minLength:"1" jsonschema:"The http or https URL to fetch."`
}

// FetchURL fetches a URL and returns its content as text.
type FetchURL struct {
	opts   options
	client *http.Client // opts.client, guarded by the address policy
}

// newFetchURL reads the address policy from the tool's config.
func newFetchURL(cfg pluginsdk.Config, o options) (*FetchURL, error) {
	var c fetchConfig
	if err := cfg.Decode(&c); err != nil {
		return nil, fmt.Errorf("invalid FetchURL config: %w", err)
	}
	p, err := newAddrPolicy(c)
	if err != nil {
		return nil, err
	}
	return &FetchURL{opts: o, client: guardedClient(o.client, p)}, nil
}

// Call fetches the URL.
func (t *FetchURL) Call(ctx context.Context, p FetchParams) pluginsdk.Result {
	u, err := checkURL(p.URL)
	if err != nil {
		return pluginsdk.Error(err.Error()).WithBrief("Invalid URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Invalid URL `%s`: %v", p.URL, err)).WithBrief("Invalid URL")
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,text/*;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := t.client.Do(req)
	if err != nil {
		if r, target, ok := asRefused(err); ok {
			return refusedResult(r, target, u.String())
		}
		return requestError(ctx, p.URL, t.client, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return pluginsdk.Error(fmt.Sprintf("Failed to fetch %s: HTTP %s.", final, resp.Status)).
			WithBrief(fmt.Sprintf("HTTP %d", resp.StatusCode))
	}

	body, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.maxBytes+1))
	if err != nil {
		return requestError(ctx, p.URL, t.client, err)
	}
	cut := int64(len(body)) > t.opts.maxBytes
	if cut {
		body = body[:t.opts.maxBytes]
	}
	contentType := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "" {
		contentType = http.DetectContentType(body)
		mediaType, _, _ = mime.ParseMediaType(contentType)
	}
	kind := classify(mediaType)
	if kind == kindBinary {
		return pluginsdk.Error(fmt.Sprintf("%s is %s content, not text; FetchURL only returns text (HTML, plain text, JSON, XML...).",
			final, mediaType)).WithBrief("Not text")
	}
	text, err := decode(body, contentType)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot decode %s: %v", final, err)).WithBrief("Decode failed")
	}

	var msg strings.Builder
	title := ""
	if kind == kindHTML {
		text, title, err = htmlToMarkdown(ctx, text, resp.Request.URL)
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot convert the HTML of %s: %v", final, err)).WithBrief("Convert failed")
		}
		fmt.Fprintf(&msg, "Fetched %s (%s, %d bytes), converted to Markdown.", final, mediaType, len(body))
		if title != "" {
			fmt.Fprintf(&msg, " Title: %s", title)
		}
	} else {
		fmt.Fprintf(&msg, "Fetched %s (%s, %d bytes).", final, mediaType, len(body))
	}
	if final != u.String() {
		fmt.Fprintf(&msg, " Redirected from %s.", u.String())
	}
	if cut {
		fmt.Fprintf(&msg, " The body is larger than %d MB: only its first %d bytes were read.", t.opts.maxBytes>>20, t.opts.maxBytes)
	}
	if strings.TrimSpace(text) == "" {
		msg.WriteString(" It has no readable text.")
	}
	return pluginsdk.Ok(text).WithMessage(msg.String()).WithBrief("Fetched " + resp.Request.URL.Host)
}

// checkURL accepts absolute http and https URLs only.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("Invalid URL `%s`: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("Only http and https URLs can be fetched, not `%s`.", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("The URL `%s` has no host.", raw)
	}
	return u, nil
}

// requestError explains a failed request: timeout, cancellation or other.
func requestError(ctx context.Context, raw string, client *http.Client, err error) pluginsdk.Result {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return pluginsdk.Error("The request was cancelled.").WithBrief("Cancelled")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return pluginsdk.Error(fmt.Sprintf("Fetching %s timed out after %s.", raw, client.Timeout)).WithBrief("Timed out")
	}
	return pluginsdk.Error(fmt.Sprintf("Failed to fetch %s: %v", raw, err)).WithBrief("Fetch failed")
}

type contentKind int

const (
	kindBinary contentKind = iota
	kindText
	kindHTML
)

// textTypes are media types outside text/* that are text.
var textTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/javascript": true, "application/ecmascript": true,
	"application/x-javascript": true, "application/yaml": true, "application/x-yaml": true, "application/toml": true,
	"application/x-toml": true, "application/x-sh": true, "application/sql": true, "application/graphql": true,
	"application/x-ndjson": true, "application/csv": true, "application/x-www-form-urlencoded": true,
	"image/svg+xml": true,
}

func classify(mediaType string) contentKind {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return kindHTML
	case strings.HasPrefix(mediaType, "text/"), textTypes[mediaType],
		strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"), strings.HasSuffix(mediaType, "+yaml"):
		return kindText
	}
	return kindBinary
}

// decode converts body to UTF-8 using the charset of the Content-Type, a
// BOM or an HTML meta tag, and assumes UTF-8 otherwise.
func decode(body []byte, contentType string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// droppedTags hold page chrome, not content.
var droppedTags = []string{"nav", "footer", "aside", "form", "button", "svg", "canvas", "template", "dialog", "select", "object", "embed"}

// htmlToMarkdown converts a page to Markdown, with links made absolute
// against base, and returns its title.
func htmlToMarkdown(ctx context.Context, page string, baseURL *url.URL) (string, string, error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", "", err
	}
	title := strings.Join(strings.Fields(findTitle(doc)), " ")
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin(),
	))
	for _, tag := range droppedTags {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	md, err := conv.ConvertNode(doc, converter.WithContext(ctx), converter.WithDomain(baseURL.String()))
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(md)) + "\n", title, nil
}

func findTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return b.String()
	}
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c); t != "" {
			return t
		}
	}
	return ""
}
