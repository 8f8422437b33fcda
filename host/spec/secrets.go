package spec

import (
	"slices"

	"github.com/kosong-host/kosong-host/providers/registry"
)

// otherSecretEnv are provider key variables of other tools that hold the
// same keys (Kimi CLI's MOONSHOT_API_KEY, say).
var otherSecretEnv = []string{"MOONSHOT_API_KEY", "AZURE_OPENAI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY"}

// SecretEnv reports whether name is a provider key variable: one of the
// key variables of the built-in providers (providers/registry) or of
// otherSecretEnv. A plugin's `env:` may name one only with allow_secrets.
func SecretEnv(name string) bool {
	if slices.Contains(otherSecretEnv, name) {
		return true
	}
	for _, b := range registry.Builtins() {
		if slices.Contains(b.APIKeyEnvs, name) {
			return true
		}
	}
	return false
}
