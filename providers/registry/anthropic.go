package registry

import (
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/config"
)

// newAnthropic is the factory of anthropic providers: a key read from
// ANTHROPIC_AUTH_TOKEN goes as a bearer token, and an alias with the
// thinking capability gets the thinking budget anthropic.ThinkingBudget
// gives its response cap.
func newAnthropic(s Settings) (providers.ChatProvider, error) {
	cfg := anthropic.Config{Name: s.Provider.Name, BaseURL: s.BaseURL, APIKey: s.APIKey, APIKeyEnv: s.KeyFrom, Model: s.Model,
		MaxTokens: int64(s.MaxTokens()), Headers: s.Provider.Headers, Timeouts: s.Timeouts, NoImageInput: s.NoImageInput()}
	if s.KeyFrom == anthropic.AuthTokenEnv {
		cfg.APIKey, cfg.AuthToken = "", s.APIKey
	}
	if s.Has(config.CapThinking) || s.Has(config.CapAlwaysThinking) {
		cfg.ThinkingBudget = anthropic.ThinkingBudget(cfg.MaxTokens)
	}
	return anthropic.New(cfg)
}
