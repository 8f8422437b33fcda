package spec

import (
	"fmt"
	"regexp"
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

// varRefRE matches a reference ${NAME} in an MCP server's env and headers
// values.
var varRefRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandVars replaces each ${NAME} in v with getenv(NAME) ("" when unset):
// how an MCP server's env and headers values are expanded.
func ExpandVars(v string, getenv func(string) string) string {
	return varRefRE.ReplaceAllStringFunc(v, func(m string) string { return getenv(m[2 : len(m)-1]) })
}

// secretEnv is the first variable of the reference's env that is a
// provider key variable ("" when none, or when allow_secrets says so).
func (r *ToolRef) secretEnv(extra []string) string {
	if r.AllowSecrets {
		return ""
	}
	for _, name := range r.Env {
		if SecretEnv(name, extra...) {
			return name
		}
	}
	return ""
}

func pluginSecretMsg(plugin, name string) string {
	return fmt.Sprintf("plugin %s: env names the provider key variable %s, which never reaches a plugin "+
		"unless this entry says allow_secrets: true", plugin, name)
}

// secretRef finds the first value of the server's env or headers (field,
// with its key) that expands a provider key variable (name); all "" when
// none, or when allow_secrets says so.
func (m *MCPServer) secretRef(extra []string) (field, key, name string) {
	if m.AllowSecrets {
		return "", "", ""
	}
	for _, f := range []struct {
		field  string
		values map[string]string
	}{{"env", m.Env}, {"headers", m.Headers}} {
		keys := make([]string, 0, len(f.values))
		for k := range f.values {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			for _, ref := range varRefRE.FindAllStringSubmatch(f.values[k], -1) {
				if SecretEnv(ref[1], extra...) {
					return f.field, k, ref[1]
				}
			}
		}
	}
	return "", "", ""
}

func mcpSecretMsg(server, field, key, name string) string {
	return fmt.Sprintf("mcp server %q: %s %s expands the provider key variable %s, which never reaches an MCP server "+
		"unless this entry says allow_secrets: true", server, field, key, name)
}

// CheckSecrets refuses to hand a provider key to a plugin or an MCP server
// whose entry does not say allow_secrets: true: a plugin whose env names a
// key variable, an MCP server whose env or headers expand one as ${NAME}.
// The key variables are SecretEnv's, extra included (a configuration
// file's api_key_env names, which Load cannot know). The error is an
// *Error naming the entry's file and line, and the plugin or server.
func CheckSecrets(plugins []PluginRef, servers []MCPServer, extra []string) error {
	for _, p := range plugins {
		for _, r := range p.Refs {
			if name := r.secretEnv(extra); name != "" {
				return &Error{File: r.File, Line: r.Line, Msg: pluginSecretMsg(r.Name(), name)}
			}
		}
	}
	for _, s := range servers {
		if field, key, name := s.secretRef(extra); name != "" {
			return &Error{File: s.File, Line: s.Line, Msg: mcpSecretMsg(s.Name, field, key, name)}
		}
	}
	return nil
}
