// Package agents holds the agent specs and prompts built into kosong-host:
// default (the built-in default agent that `extend: default` names and that
// runs when no agent.yaml is found) and demo (the scripted model of
// `make demo`).
package agents

import "embed"

// FS holds default/ and demo/ as they are in the repository.
//
//go:embed default demo
var FS embed.FS

// DefaultDir is the folder of the built-in default agent in FS; its spec is
// DefaultDir/agent.yaml.
const DefaultDir = "default"
