package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MCPServer is one MCP server the agent's tools come from: an entry of `mcp_servers` in
// agent.yaml, or of "mcpServers" in an MCP config file (LoadMCPConfig). Both use the same
// keys:
//
//	mcp_servers:
//	  github:                       # the server's name: letters, digits, '_' and '-'
//	    command: npx                # stdio: the program (a path containing '/' is relative
//	    args: [-y, "@modelcontextprotocol/server-github"]  #   to the declaring file's folder)
//	    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}  # added to the minimal environment
//	    cwd: ./work                 # relative to the declaring file's folder
//	    sandbox: {write: [$WORK_DIR], network: [443]}  # as a plugin's; default: the agent's
//	  docs:
//	    url: https://example.com/mcp   # streamable HTTP
//	    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
//	    prefix: false               # tools keep their bare names (default: SERVER__TOOL)
//	    enabled_tools: [search]     # only these tools (default: every tool)
//	    disabled_tools: [delete]    # never these tools
//	    timeout: 30s                # each call, reset by progress (default 60s)
//	    startup_timeout: 10s        # start, handshake and tools/list (default 10s)
//	    disabled: true              # not started
//	    allow_secrets: true         # env or headers may expand a provider key variable
//
// The keys of other hosts' config files are accepted too: Claude Desktop's and
// Cursor's (`disabled`, `type`, `env`, `cwd`), Cline's and Roo's (`autoApprove`,
// `alwaysAllow`, `disabledTools`, `timeout` in seconds), Codex's (`enabled`,
// `startup_timeout_sec`, `startup_timeout_ms`, `tool_timeout_sec`), Gemini CLI's
// (`httpUrl`, `includeTools`, `excludeTools`, `trust`) and Windsurf's (`serverUrl`).
// `autoApprove`, `alwaysAllow` and `trust` are kept but not honoured: every call of an
// MCP tool is approved through kosong-host. In an MCP config file any other unknown key
// is a warning naming the file (Warnings); in agent.yaml it is an error.
//
// `transport` (or `type`) may be given as "stdio", "http", "streamable-http" or
// "streamable_http"; it must agree with command / url. `transport: sse` with a url
// selects the older HTTP+SSE transport (a GET event stream plus POSTed messages). The
// values of env and headers may name host environment variables as ${NAME}; the client
// expands them when it starts the server (host/mcpclient, with ExpandVars). A provider
// key variable (SecretEnv) may be named only in an entry that says allow_secrets: true.
type MCPServer struct {
	// Name is the server's name (its key), never empty.
	Name string
	// Command, Args, Env and Cwd describe a stdio server. Command is made absolute if it
	// contains a path separator; Cwd is absolute or "".
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Sandbox confines a stdio server as a plugin's `sandbox` does; nil =
	// the agent's.
	Sandbox *Sandbox
	// URL and Headers describe an HTTP server: streamable HTTP, or HTTP+SSE
	// when SSE is set.
	URL     string
	Headers map[string]string
	SSE     bool
	// Prefix says the server's tools are named SERVER__TOOL (the default).
	Prefix bool
	// EnabledTools, if not nil, lists the only tools to load.
	EnabledTools []string
	// DisabledTools lists tools never to load.
	DisabledTools []string
	// Timeout bounds each call without progress; 0 = the client's default.
	Timeout time.Duration
	// StartupTimeout bounds starting the server (process, handshake,
	// tools/list); 0 = the client's default.
	StartupTimeout time.Duration
	// Disabled servers are not started.
	Disabled bool
	// AllowSecrets lets Env and Headers expand a provider key variable
	// (SecretEnv); without it such an entry is refused.
	AllowSecrets bool
	// AutoApprove lists the tools another host's config approves without
	// asking (autoApprove, alwaysAllow; "*" for trust: true). Kept for
	// tools lists; kosong-host asks approval for every call all the same.
	AutoApprove []string
	// Warnings are the keys of an MCP config file that were ignored, one
	// message each, naming the file.
	Warnings []string
	// File and Line locate the server's entry (File absolute).
	File string
	Line int
}

// Stdio reports whether the server is a stdio server (else it is streamable HTTP).
func (m *MCPServer) Stdio() bool { return m.Command != "" }

// Where is "FILE:LINE" of the entry, for messages.
func (m *MCPServer) Where() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

// Wants reports whether the server's tool (by its own name) is to be loaded.
func (m *MCPServer) Wants(tool string) bool {
	if m.EnabledTools != nil && !slices.Contains(m.EnabledTools, tool) {
		return false
	}
	return !slices.Contains(m.DisabledTools, tool)
}

// ToolName is the name the server's tool gets in the toolset.
func (m *MCPServer) ToolName(tool string) string {
	if m.Prefix {
		return m.Name + MCPPrefixSeparator + tool
	}
	return tool
}

// MCPPrefixSeparator joins server and tool names: SERVER__TOOL.
const MCPPrefixSeparator = "__"

var (
	// mcpServerKeys are the keys messages list; other hosts' (see
	// MCPServer) are accepted besides.
	mcpServerKeys = []string{"command", "args", "env", "cwd", "sandbox", "url", "headers", "transport", "type", "prefix", "enabled_tools", "disabled_tools",
		"timeout", "startup_timeout", "disabled", "allow_secrets"}
	mcpServerNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// mcpServers parses `mcp_servers` (a mapping of name to server); null is none.
func (p *parser) mcpServers(n *yaml.Node, what string) ([]MCPServer, error) {
	out := []MCPServer{}
	if isNull(n) {
		return out, nil
	}
	err := p.mapping(n, what, func(k, v *yaml.Node) error {
		s, err := p.mcpServer(k, v)
		out = append(out, s)
		return err
	})
	return out, err
}

func (p *parser) mcpServer(k, n *yaml.Node) (MCPServer, error) {
	s := MCPServer{Name: k.Value, Prefix: true, File: p.f.path, Line: k.Line}
	if !mcpServerNameRE.MatchString(s.Name) {
		return s, p.errf(k, "invalid MCP server name %q (want 1-64 letters, digits, '_' or '-')", s.Name)
	}
	where := "mcp server " + fmt.Sprintf("%q", s.Name)
	var transport, cwd string
	var transportNode, stdioOnly, httpOnly, envNode, headersNode *yaml.Node
	err := p.mapping(n, where, func(k, v *yaml.Node) error {
		var err error
		switch k.Value {
		case "command":
			s.Command, err = p.nonEmptyString(v, where+": command")
			if err == nil && isPath(s.Command) {
				s.Command = p.f.abs(s.Command)
			}
		case "args":
			stdioOnly = k
			s.Args, err = p.stringList(v, where+": args")
		case "env":
			stdioOnly, envNode = k, v
			s.Env, err = p.stringMap(v, where+": env")
			for name := range s.Env {
				if err == nil && !envNameRE.MatchString(name) {
					err = p.errf(v, "%s: invalid environment variable name %q", where, name)
				}
			}
		case "cwd":
			stdioOnly = k
			cwd, err = p.nonEmptyString(v, where+": cwd")
			s.Cwd = p.f.abs(cwd)
		case "sandbox":
			stdioOnly = k
			s.Sandbox, err = p.sandbox(v, where)
		case "url", "httpUrl", "serverUrl":
			if s.URL != "" {
				return p.errf(k, "%s: give one of url, httpUrl and serverUrl", where)
			}
			s.URL, err = p.nonEmptyString(v, where+": "+k.Value)
			if err == nil {
				u, perr := url.Parse(s.URL)
				if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = p.errf(v, "%s: invalid url %q (want http:// or https://)", where, s.URL)
				}
			}
		case "headers":
			httpOnly, headersNode = k, v
			s.Headers, err = p.stringMap(v, where+": headers")
		case "allow_secrets":
			s.AllowSecrets, err = p.boolean(v, where+": allow_secrets")
		case "transport", "type", "transportType":
			if transportNode != nil {
				return p.errf(k, "%s: give transport or type, not both", where)
			}
			transportNode = v
			transport, err = p.str(v, where+": "+k.Value)
		case "prefix":
			s.Prefix, err = p.boolean(v, where+": prefix")
		case "enabled_tools", "includeTools":
			s.EnabledTools, err = p.toolNames(v, where+": "+k.Value)
		case "disabled_tools", "disabledTools", "excludeTools":
			var names []string
			names, err = p.toolNames(v, where+": "+k.Value)
			s.DisabledTools = unique(append(s.DisabledTools, names...))
		case "timeout", "tool_timeout_sec":
			s.Timeout, err = p.duration(v, where+": "+k.Value)
		case "startup_timeout", "startup_timeout_sec":
			s.StartupTimeout, err = p.duration(v, where+": "+k.Value)
		case "startup_timeout_ms":
			var ms time.Duration
			ms, err = p.duration(v, where+": "+k.Value)
			s.StartupTimeout = ms / 1000 // a number of milliseconds read as seconds
		case "disabled":
			s.Disabled, err = p.boolean(v, where+": disabled")
		case "enabled":
			var on bool
			on, err = p.boolean(v, where+": enabled")
			s.Disabled = !on
		case "autoApprove", "alwaysAllow":
			var names []string
			names, err = p.toolNames(v, where+": "+k.Value)
			s.AutoApprove = unique(append(s.AutoApprove, names...))
		case "trust":
			var trust bool
			if trust, err = p.boolean(v, where+": trust"); trust {
				s.AutoApprove = []string{"*"}
			}
		default:
			if p.mcpConfig {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %s: unknown key %q ignored", p.f.path, k.Line, where, k.Value))
				return nil
			}
			return p.unknownKey(k, where, mcpServerKeys)
		}
		return err
	})
	if err != nil {
		return s, err
	}
	switch {
	case s.Command != "" && s.URL != "":
		return s, p.errf(k, "%s: give command (stdio) or url (streamable HTTP), not both", where)
	case s.Command == "" && s.URL == "":
		return s, p.errf(k, "%s: command (stdio) or url (streamable HTTP) is required", where)
	case s.URL != "" && stdioOnly != nil:
		return s, p.errf(stdioOnly, "%s: %s is for stdio servers (with command), not with url", where, stdioOnly.Value)
	case s.Command != "" && httpOnly != nil:
		return s, p.errf(httpOnly, "%s: headers are for HTTP servers (with url), not with command", where)
	}
	if field, key, name := s.secretRef(nil); name != "" {
		at := envNode
		if field == "headers" {
			at = headersNode
		}
		return s, p.errf(at, "%s", mcpSecretMsg(s.Name, field, key, name))
	}
	if transportNode != nil {
		switch strings.ToLower(transport) {
		case "stdio":
			if !s.Stdio() {
				return s, p.errf(transportNode, "%s: transport stdio needs command, not url", where)
			}
		case "http", "streamable-http", "streamable_http", "streamablehttp":
			if s.Stdio() {
				return s, p.errf(transportNode, "%s: transport %s needs url, not command", where, transport)
			}
		case "sse":
			if s.Stdio() {
				return s, p.errf(transportNode, "%s: transport sse needs url, not command", where)
			}
			s.SSE = true
		default:
			return s, p.errf(transportNode, "%s: unknown transport %q (want stdio, http or sse)", where, transport)
		}
	}
	return s, nil
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return false, p.errf(n, "%s must be true or false, got %s", what, nodeText(n))
	}
	return b, nil
}

func (p *parser) toolNames(n *yaml.Node, what string) ([]string, error) {
	names, err := p.stringList(n, what)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return nil, p.errf(n, "%s: empty tool name", what)
		}
	}
	return unique(names), nil
}

// duration reads a Go duration ("30s") or a number of seconds.
func (p *parser) duration(n *yaml.Node, what string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		var secs float64
		if err := n.Decode(&secs); err == nil && secs > 0 && secs < math.MaxInt64/float64(time.Second) {
			return time.Duration(secs * float64(time.Second)), nil
		}
	} else if s, err := p.str(n, what); err == nil {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d, nil
		}
	}
	return 0, p.errf(n, "%s: invalid timeout %s (want a positive duration like \"30s\" or a number of seconds)", what, nodeText(n))
}

// LoadMCPConfig reads an MCP config file: the JSON `{"mcpServers": {NAME: {...}}}` that
// MCP clients share (Claude Desktop's, Cursor's, Kimi CLI's...), each server written with
// the keys of MCPServer, other hosts' included. Other top-level keys are ignored (the file
// may be a client's whole configuration); an unknown key in a server is a warning in its
// Warnings. Relative paths are relative to the file's folder. Every error is a *Error.
func LoadMCPConfig(path string) ([]MCPServer, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{Msg: oneLine(fmt.Sprintf("MCP config file not found: %s: %v", path, err))}
	}
	data, err := os.ReadFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Msg: "MCP config file not found: " + abs}
	case err != nil:
		return nil, &Error{Msg: oneLine("Cannot read MCP config file: " + err.Error())}
	}
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, &Error{Msg: oneLine("Invalid JSON in MCP config file: " + abs + ": " + err.Error())}
	}
	// JSON is YAML: parsing it as YAML gives line numbers for messages.
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Msg: oneLine("Invalid JSON in MCP config file: " + abs + ": " + err.Error())}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	p := &parser{f: &file{path: abs, dir: filepath.Dir(abs)}, mcpConfig: true}
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, `MCP config file must be a JSON object with "mcpServers"`)
	}
	var servers []MCPServer
	found := false
	err = p.mapping(root, "MCP config file", func(k, v *yaml.Node) error {
		if k.Value != "mcpServers" {
			return nil
		}
		found = true
		var err error
		servers, err = p.mcpServers(v, "mcpServers")
		return err
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &Error{File: abs, Msg: `no "mcpServers" key in MCP config file`}
	}
	return servers, nil
}

// MergeMCPServers joins lists of MCP servers (the spec's, then each config file's). A name
// given twice is an error naming both entries.
func MergeMCPServers(lists ...[]MCPServer) ([]MCPServer, error) {
	var out []MCPServer
	seen := map[string]int{}
	for _, l := range lists {
		for _, s := range l {
			if i, ok := seen[s.Name]; ok {
				return nil, &Error{File: s.File, Line: s.Line,
					Msg: fmt.Sprintf("MCP server %q is also defined at %s", s.Name, out[i].Where())}
			}
			seen[s.Name] = len(out)
			out = append(out, s)
		}
	}
	return out, nil
}
