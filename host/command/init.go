package command

import (
	"context"
	"strings"
)

// InitPrompt is what /init asks the model: to study the repository and
// write an AGENTS.md at its root for agents that work on it later.
const InitPrompt = `Explore this repository and write an AGENTS.md file at its root for the coding agents that will work on it after you (it is read into their system prompt).

1. Look at the layout and the key files: the build and package manifests (go.mod, package.json, pyproject.toml, Cargo.toml, Makefile...), the README and docs, the CI configuration.
2. Find out the languages and tools, how to build, test, lint and run the project, and the commands for each.
3. Find out how the code is organised: the main packages or modules and what each holds, the entry points, the dependencies between parts.
4. Note the project's conventions: code style, naming, error handling, tests (where they live, how they are written and run), commit and review habits, anything a newcomer would get wrong.

Then write AGENTS.md: concise, concrete and correct, in Markdown with short sections (Overview, Build and test, Layout, Conventions, Pitfalls), with the exact commands. Do not invent what you did not see. If an AGENTS.md exists already, read it first and improve it, keeping what is still true.`

// runInit asks the model to write the repository's AGENTS.md; ARG adds
// the user's own wishes.
func runInit(ctx context.Context, e Env, arg string) {
	prompt := InitPrompt
	if arg = strings.TrimSpace(arg); arg != "" {
		prompt += "\n\nThe user adds: " + arg
	}
	_ = e.Turn(ctx, prompt) // the front end shows the turn's errors
	e.say("AGENTS.md is read into the system prompt of the next session (/clear starts one).")
}
