package registry

import (
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
)

// newOpenAICompatible is the factory of kimi, openai and openai-compatible
// providers.
func newOpenAICompatible(s Settings) (providers.ChatProvider, error) {
	return openaicompat.New(openaicompat.Config{Name: s.Provider.Name, BaseURL: s.BaseURL, APIKey: s.APIKey, APIKeyEnv: s.KeyFrom,
		Model: s.Model, MaxTokens: s.MaxTokens(), Headers: s.Provider.Headers, Timeouts: s.Timeouts,
		NoImageInput: s.NoImageInput()})
}
