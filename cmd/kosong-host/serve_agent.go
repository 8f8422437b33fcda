package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/trust"
)

// sessionAgent is the agent of a server session in dir and what the
// workspace trust rules allow of dir.
type sessionAgent struct {
	src agent.Source
	// dotenv: dir's .env may be read.
	dotenv bool
	// reload vets a reload of a project agent trusted by the store.
	reload func() error
	// note says in one line what was left out ("" nothing).
	note string
}

// agentForSession finds the agent of a server session in dir as run
// finds it (findAgent), without asking: explicit (the request's agent, or
// serve's --agent), else ./.kosong/agent.yaml or ./agent.yaml, else a
// project folder's .kosong/agent.yaml above dir, else the user's own or
// the built-in default. A folder's own files run only when it is trusted
// as its files are now (or serve --trust); else they are left out and the
// note says so.
func (g *globals) agentForSession(dir, explicit string) (sessionAgent, error) {
	folder, err := trust.Folder(dir)
	if err != nil {
		return sessionAgent{}, err
	}
	trusted := func(f string) bool {
		if g.trust {
			return true
		}
		ok, err := trustedAsNow(f)
		return err == nil && ok
	}
	sa := sessionAgent{dotenv: !isFileAt(filepath.Join(folder, trust.DotEnvFile)) || trusted(folder)}
	if !sa.dotenv {
		sa.note = fmt.Sprintf("ignoring %s: this folder is not trusted; review and trust it with `kosong-host trust %s`",
			filepath.Join(folder, trust.DotEnvFile), folder)
	}
	if explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(dir, explicit)
		}
		sa.src = agent.Source{Path: explicit, Explicit: true}
		return sa, nil
	}
	builtin, berr := builtinAgentPath()
	src, err := agent.Find("", dir, builtin, os.Getenv)
	if err != nil {
		return sessionAgent{}, fmt.Errorf("%w %v", err, berr)
	}
	if !src.Builtin && !filepath.IsAbs(src.Path) {
		// The folder's own agent file.
		src.Path = filepath.Join(dir, src.Path)
		if trusted(folder) {
			sa.src, sa.reload = src, g.reloadCheck(folder)
			return sa, nil
		}
		fb, err := fallbackAgent()
		if err != nil {
			return sessionAgent{}, err
		}
		sa.src = fb
		sa.note = fmt.Sprintf("ignoring %s: this folder is not trusted (using %s); review and trust it with `kosong-host trust %s`",
			scanFolder(folder).Ignored(true), agentName(fb), folder)
		return sa, nil
	}
	sa.src = src
	if pdir, file := ancestorAgent(dir); file != "" {
		pfolder, err := trust.Folder(pdir)
		if err == nil && trusted(pfolder) {
			sa.src, sa.reload = agent.Source{Path: file}, g.reloadCheck(pfolder)
		} else if sa.note == "" {
			sa.note = fmt.Sprintf("ignoring %s: that folder is not trusted (using %s); review and trust it with `kosong-host trust %s`",
				file, agentName(src), pdir)
		}
	}
	return sa, nil
}

// agentName names an agent source in a note.
func agentName(src agent.Source) string {
	if src.Builtin {
		return "the built-in default agent"
	}
	return src.Path
}

// reloadCheck refuses a reload once folder's project files changed since
// it was trusted (nil under --trust).
func (g *globals) reloadCheck(folder string) func() error {
	if g.trust {
		return nil
	}
	return projectUnchanged(folder)
}
