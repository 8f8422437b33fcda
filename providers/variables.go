package providers

// The environment variables of the built-in providers. The provider
// packages (openaicompat, anthropic, google) name their variables with
// these, the registry resolves keys, base URLs and models with them, and
// the host refuses to hand a key variable to a plugin or an MCP server.
// This package links no provider SDK, so the host learns the names
// without linking one.
const (
	KimiAPIKeyEnv  = "KIMI_API_KEY"
	KimiBaseURLEnv = "KIMI_BASE_URL"
	KimiModelEnv   = "KIMI_MODEL_NAME"

	OpenAIAPIKeyEnv  = "OPENAI_API_KEY"
	OpenAIBaseURLEnv = "OPENAI_BASE_URL"
	OpenAIModelEnv   = "OPENAI_MODEL_NAME"

	AnthropicAPIKeyEnv = "ANTHROPIC_API_KEY"
	// AnthropicAuthTokenEnv holds a bearer token instead of an API key
	// (gateways such as Moonshot's Anthropic-compatible endpoint);
	// AnthropicAPIKeyEnv wins when both are set.
	AnthropicAuthTokenEnv = "ANTHROPIC_AUTH_TOKEN"
	AnthropicBaseURLEnv   = "ANTHROPIC_BASE_URL"
	AnthropicModelEnv     = "ANTHROPIC_MODEL_NAME"

	GoogleAPIKeyEnv = "GOOGLE_API_KEY"
	// GeminiAPIKeyEnv holds the google key when GoogleAPIKeyEnv is not set.
	GeminiAPIKeyEnv  = "GEMINI_API_KEY"
	GoogleBaseURLEnv = "GOOGLE_BASE_URL"
	GoogleModelEnv   = "GOOGLE_MODEL_NAME"
)

// Variables are the environment variables one built-in provider reads.
type Variables struct {
	// Provider is the built-in provider's name, which is also its type:
	// kimi, openai, anthropic or google.
	Provider string
	// APIKey hold the key; the first one set wins.
	APIKey []string
	// BaseURL and Model override the provider's base URL and model.
	BaseURL, Model string
}

// BuiltinVariables lists the variables of the built-in providers, in the
// order a provider is picked when nothing else chooses: kimi, openai,
// anthropic, google.
func BuiltinVariables() []Variables {
	return []Variables{
		{Provider: "kimi", APIKey: []string{KimiAPIKeyEnv}, BaseURL: KimiBaseURLEnv, Model: KimiModelEnv},
		{Provider: "openai", APIKey: []string{OpenAIAPIKeyEnv}, BaseURL: OpenAIBaseURLEnv, Model: OpenAIModelEnv},
		{Provider: "anthropic", APIKey: []string{AnthropicAPIKeyEnv, AnthropicAuthTokenEnv},
			BaseURL: AnthropicBaseURLEnv, Model: AnthropicModelEnv},
		{Provider: "google", APIKey: []string{GoogleAPIKeyEnv, GeminiAPIKeyEnv}, BaseURL: GoogleBaseURLEnv, Model: GoogleModelEnv},
	}
}

// otherKeyVariables hold provider keys for other tools (Kimi CLI's
// MOONSHOT_API_KEY, say): the same keys, under other names.
var otherKeyVariables = []string{"MOONSHOT_API_KEY", "AZURE_OPENAI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"}

// KeyVariables lists the variables known to hold a provider key: those of
// the built-in providers, then well-known ones of other tools
// (MOONSHOT_API_KEY, AZURE_OPENAI_API_KEY, DEEPSEEK_API_KEY,
// OPENROUTER_API_KEY). A configuration file may name more (api_key_env).
func KeyVariables() []string {
	var out []string
	for _, v := range BuiltinVariables() {
		out = append(out, v.APIKey...)
	}
	return append(out, otherKeyVariables...)
}
