package spec

import (
	"slices"

	"github.com/kosong-host/kosong-host/providers"
)

// SecretEnv reports whether name is a provider key variable: one of
// providers.KeyVariables (the built-in providers' and well-known ones of
// other tools) or of extra (more key variables, such as those the
// configuration file names with api_key_env). A plugin's `env:` may name
// one, and an MCP server's env or headers may expand one, only with
// allow_secrets.
func SecretEnv(name string, extra ...string) bool {
	return slices.Contains(providers.KeyVariables(), name) || slices.Contains(extra, name)
}
