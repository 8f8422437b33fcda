package registry

import (
	"net/http"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
)

// newOpenAICompatible is the factory of kimi, openai and openai-compatible
// providers: the provider's headers go through its HTTP client.
func newOpenAICompatible(s Settings) (providers.ChatProvider, error) {
	return openaicompat.New(openaicompat.Config{Name: s.Provider.Name, BaseURL: s.BaseURL, APIKey: s.APIKey, APIKeyEnv: s.KeyFrom,
		Model: s.Model, MaxTokens: s.MaxTokens(), HTTPClient: headerClient(s.Provider.Headers), Timeouts: s.Timeouts,
		NoImageInput: s.NoImageInput()})
}

// headerClient is an HTTP client adding headers to every request (nil
// when there are none: the provider's default).
func headerClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return nil
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return t.base.RoundTrip(req)
}
