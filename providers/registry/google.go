package registry

import (
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/google"
)

// newGoogle is the factory of google providers; the thinking level is the
// provider's default for the model.
func newGoogle(s Settings) (providers.ChatProvider, error) {
	return google.New(google.Config{Name: s.Provider.Name, BaseURL: s.BaseURL, APIKey: s.APIKey, APIKeyEnv: s.KeyFrom, Model: s.Model,
		MaxTokens: int32(min(s.MaxTokens(), 1<<31-1)), Headers: s.Provider.Headers, Timeouts: s.Timeouts, NoImageInput: s.NoImageInput()})
}
