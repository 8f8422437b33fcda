package google

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/kosong-host/kosong-host/providers"
)

// invalidKey reports an API error that says the key is wrong: Gemini
// answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
func invalidKey(e genai.APIError) bool {
	for _, d := range e.Details {
		if r, _ := d["reason"].(string); strings.HasPrefix(r, "API_KEY_") {
			return true
		}
	}
	return strings.Contains(e.Message, "API key not valid") || strings.Contains(e.Message, "API key expired")
}

// classify maps an SDK error, from the request or from the stream.
func (p *Provider) classify(ctx context.Context, err error) error {
	if cerr := p.ctxError(ctx); cerr != nil {
		return cerr
	}
	if se := providers.StallError(p.cfg.Name, err); se != nil {
		return se
	}
	if pe := (*providers.Error)(nil); errors.As(err, &pe) {
		return pe // already classified
	}
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	if errors.As(err, &apiErrPtr) && apiErrPtr != nil {
		apiErr = *apiErrPtr
	}
	if apiErr.Code != 0 || errors.As(err, &apiErr) {
		kind := providers.KindForStatus(apiErr.Code)
		if kind == providers.ErrBadRequest && invalidKey(apiErr) {
			kind = providers.ErrAuth
		}
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.Code)
		}
		if apiErr.Status != "" && !strings.Contains(msg, apiErr.Status) {
			msg = apiErr.Status + ": " + msg
		}
		return p.newError(kind, apiErr.Code, errors.New(truncate(msg)))
	}
	if strings.Contains(err.Error(), "iterateResponseStream") {
		// The SDK's message quotes the chunk, new lines included.
		return p.newError(providers.ErrServer, 0, errors.New("malformed stream chunk: "+oneLine(err.Error())))
	}
	// Transport failures: refused connections, resets, a body cut short.
	return p.newError(providers.ErrConnection, 0, err)
}

// oneLine folds s onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
