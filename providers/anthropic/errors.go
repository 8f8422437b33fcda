package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/kosong-host/kosong-host/providers"
)

const maxBody = 2000

// kindForType classifies an error type of the API (the body's error.type,
// or an error event's in a stream).
func kindForType(typ string) (providers.ErrorKind, bool) {
	switch typ {
	case "authentication_error", "permission_error":
		return providers.ErrAuth, true
	case "rate_limit_error":
		return providers.ErrRateLimit, true
	case "overloaded_error", "api_error":
		return providers.ErrServer, true
	case "timeout_error":
		return providers.ErrConnection, true
	case "invalid_request_error", "not_found_error", "request_too_large", "billing_error":
		return providers.ErrBadRequest, true
	}
	return providers.ErrUnknown, false
}

// classify maps an SDK error, from the request or from the stream.
func (p *Provider) classify(ctx context.Context, err error) error {
	if cerr := p.ctxError(ctx); cerr != nil {
		return cerr
	}
	if se := providers.StallError(p.cfg.Name, err); se != nil {
		return se
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = truncate(apiErr.RawJSON())
		}
		msg = oneLine(msg)
		typ := oneLine(string(apiErr.Type()))
		if apiErr.StatusCode >= 400 {
			if msg == "" {
				msg = http.StatusText(apiErr.StatusCode)
			}
			return p.newError(providers.KindForStatus(apiErr.StatusCode), apiErr.StatusCode, errors.New(msg))
		}
		// An error event inside a 200 stream.
		kind, ok := kindForType(typ)
		if !ok {
			kind = providers.ErrServer
		}
		if msg == "" {
			msg = "(no message)"
		}
		return p.newError(kind, 0, fmt.Errorf("error event in stream: %s: %s", typ, msg))
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return p.newError(providers.ErrServer, 0, fmt.Errorf("malformed stream event: %w", err))
	}
	if strings.HasPrefix(err.Error(), "received error while streaming") {
		return p.newError(providers.ErrServer, 0, err)
	}
	// Transport failures: refused connections, resets, a body cut short.
	return p.newError(providers.ErrConnection, 0, err)
}

// oneLine joins the lines of a server's text with spaces: an error is one
// line, whatever the server sent.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxBody {
		return s[:maxBody] + "…"
	}
	return s
}
