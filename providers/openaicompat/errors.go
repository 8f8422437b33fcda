package openaicompat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/kosong-host/kosong-host/providers"
)

// maxBody bounds the response body kept for error messages.
const maxBody = 2000

// requestError classifies a failure to obtain a stream.
func (p *Provider) requestError(ctx context.Context, err error, w *watch) error {
	if cerr := p.ctxError(ctx); cerr != nil {
		return cerr
	}
	if se := providers.StallError(p.cfg.Name, err); se != nil {
		return se
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var urlErr *url.Error
	switch {
	case w.status >= 400:
		kind := providers.KindForStatus(w.status)
		msg := strings.TrimSpace(string(w.body))
		if kind != providers.ErrBadRequest && errors.As(err, &apiErr) && apiErr.Message != "" {
			// The message says it all; a 400's whole body may say more.
			msg = apiErr.Message
		}
		if msg == "" {
			msg = http.StatusText(w.status)
		}
		return p.newError(kind, w.status, errors.New(truncate(msg)))
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		return p.newError(providers.KindForStatus(apiErr.HTTPStatusCode), apiErr.HTTPStatusCode, errors.New(apiErr.Message))
	case errors.As(err, &reqErr):
		return p.newError(providers.KindForStatus(reqErr.HTTPStatusCode), reqErr.HTTPStatusCode, errors.New(truncate(string(reqErr.Body))))
	case errors.As(err, &urlErr):
		return p.newError(providers.ErrConnection, 0, err)
	default:
		// go-openai refused the request before sending it (validation,
		// encoding): the request is at fault.
		return p.newError(providers.ErrBadRequest, 0, err)
	}
}

// streamError classifies a failure while reading the stream.
func (p *Provider) streamError(ctx context.Context, err error) error {
	if cerr := p.ctxError(ctx); cerr != nil {
		return cerr
	}
	if se := providers.StallError(p.cfg.Name, err); se != nil {
		return se
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return p.errorEvent(apiErr.Type, apiErr.Code, apiErr.Message)
	}
	return p.newError(providers.ErrConnection, 0, fmt.Errorf("stream broken: %w", err))
}

// errorEvent classifies an error the server sent inside the stream.
func (p *Provider) errorEvent(typ string, code any, msg string) *providers.Error {
	kind := providers.ErrServer
	status := 0
	if c, ok := code.(int); ok && c >= 400 && c < 600 {
		status = c
		kind = providers.KindForStatus(c)
	} else if c, ok := code.(float64); ok && c >= 400 && c < 600 {
		status = int(c)
		kind = providers.KindForStatus(status)
	} else {
		s := strings.ToLower(typ + " " + fmt.Sprint(code))
		switch {
		case strings.Contains(s, "rate_limit"):
			kind = providers.ErrRateLimit
		case strings.Contains(s, "auth") || strings.Contains(s, "permission"):
			kind = providers.ErrAuth
		case strings.Contains(s, "invalid_request"):
			kind = providers.ErrBadRequest
		}
	}
	if msg == "" {
		msg = "(no message)"
	}
	e := p.newError(kind, 0, fmt.Errorf("error event in stream: %s", msg))
	e.StatusCode = status
	return e
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxBody {
		return s[:maxBody] + "…"
	}
	return s
}

// watch records what go-openai does not tell: the HTTP status and error
// body, and whether the stream ended with `data: [DONE]`.
type watch struct {
	status  int
	body    []byte // error responses only
	sawDone bool
	line    []byte // the start of the current line
	lineLen int
}

// scan follows the stream's lines looking for `data: [DONE]`.
func (w *watch) scan(p []byte) {
	for _, c := range p {
		if c != '\n' {
			if len(w.line) < 32 {
				w.line = append(w.line, c)
			}
			w.lineLen++
			continue
		}
		if w.lineLen < 32 {
			t := bytes.TrimSpace(w.line)
			if rest, ok := bytes.CutPrefix(t, []byte("data:")); ok && string(bytes.TrimSpace(rest)) == "[DONE]" {
				w.sawDone = true
			}
		}
		w.line, w.lineLen = w.line[:0], 0
	}
}

// watchingDoer is the go-openai HTTP client: it wraps the configured client
// to fill a watch.
type watchingDoer struct {
	client *http.Client
	w      *watch
}

func (d *watchingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if err != nil {
		return resp, err
	}
	d.w.status = resp.StatusCode
	if resp.StatusCode >= 400 {
		// go-openai reads error bodies but does not close them.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		d.w.body = body
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, w: d.w}
	return resp, nil
}

type watchedBody struct {
	io.ReadCloser
	w *watch
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.scan(p[:n])
	return n, err
}
