package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/trust"
)

// newTrustCmd is `kosong-host trust`: record, list and revoke trusted
// folders.
func newTrustCmd(g *globals) *cobra.Command {
	var list, revoke bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder's project files (.kosong/agent.yaml or agent.yaml, what it runs, .env)",
		Long: `Trust a folder's project files: ./.kosong/agent.yaml or ./agent.yaml with
its extend chain, subagents, lock file, plugins, hooks, MCP servers and
permission rules, and .env. Until a folder is trusted, kosong-host ignores
them there and runs your own agent ($XDG_CONFIG_HOME/kosong-host/agent.yaml)
or the built-in default agent. Trust covers the files as they are now: when
any of them changes, the folder is untrusted again until you trust it anew.

  kosong-host trust [DIR]           trust DIR (default: the current folder),
                                    printing what its files would run
  kosong-host trust --list          the trusted folders, and whether their
                                    files still match
  kosong-host trust --revoke [DIR]  forget DIR

The global flag --trust trusts the current folder for one run without
recording it (CI, scripts). Trusted folders are kept in
$XDG_STATE_HOME/kosong-host/trust.json.`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list && (revoke || len(args) > 0) {
				return exitCode(2, errors.New("--list takes no folder and no --revoke"))
			}
			store, err := trustStore()
			if err != nil {
				return exitCode(2, err)
			}
			out := cmd.OutOrStdout()
			if list {
				return listTrusted(out, store)
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			folder, err := trust.Folder(dir)
			if err != nil && !(revoke && filepath.IsAbs(dir)) {
				return exitCode(2, fmt.Errorf("trust: %w", err))
			}
			if revoke {
				if folder == "" {
					folder = filepath.Clean(dir) // a folder gone since it was trusted
				}
				was, err := store.Revoke(folder)
				if err != nil {
					return exitCode(2, err)
				}
				if was {
					fmt.Fprintf(out, "no longer trusted: %s\n", folder)
				} else {
					fmt.Fprintf(out, "not trusted: %s\n", folder)
				}
				return nil
			}
			p := scanFolder(folder)
			if p.Empty() {
				fmt.Fprintf(out, "nothing to trust in %s: it has no .kosong/agent.yaml, agent.yaml or .env\n", folder)
				return nil
			}
			if err := store.Trust(folder, p.Digest); err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintln(out, "trusted, as they are now (any change asks again):")
			p.Describe(out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget DIR (default: the current folder)")
	_ = g
	return cmd
}

// listTrusted prints the trusted folders and whether their project files
// still match what was trusted.
func listTrusted(out io.Writer, store *trust.Store) error {
	entries, err := store.List()
	if err != nil {
		return exitCode(2, err)
	}
	if len(entries) == 0 {
		fmt.Fprintln(out, "no trusted folders")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FOLDER\tTRUSTED\tFILES")
	for _, e := range entries {
		state := "unchanged"
		if folder, err := trust.Folder(e.Folder); err != nil {
			state = "folder gone"
		} else if scanFolder(folder).Digest != e.Digest {
			state = "changed (asks again)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Folder, e.TrustedAt.Local().Format(time.DateTime), state)
	}
	return w.Flush()
}

// trustStore is the user's store of trusted folders.
func trustStore() (*trust.Store, error) {
	path, err := trust.DefaultPath(os.Getenv)
	if err != nil {
		return nil, err
	}
	return &trust.Store{Path: path}, nil
}

// projectAgentFile is folder's own agent file: the first of
// ./.kosong/agent.yaml and ./agent.yaml there; "" when it has none.
func projectAgentFile(folder string) string {
	for _, c := range agent.Candidates(os.Getenv) {
		if filepath.IsAbs(c) {
			continue // the user's own agent
		}
		if st, err := os.Stat(filepath.Join(folder, c)); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// trustedAsNow reports whether the store trusts folder with its project
// files as they are now.
func trustedAsNow(folder string) (bool, error) {
	store, err := trustStore()
	if err != nil {
		return false, err
	}
	return store.Trusted(folder, scanFolder(folder).Digest)
}

// scanFolder reads folder's project files.
func scanFolder(folder string) *trust.Project {
	return trust.Scan(folder, trust.ScanOptions{AgentFile: projectAgentFile(folder), DefaultAgentPath: defaultAgentPath()})
}

// gateWorkspace lets the work dir's project files be used only when the
// folder is trusted (recorded with the files' current digest, or --trust
// for this run). findAgent has found the agent; an untrusted project agent
// is replaced by the user's own or the built-in default agent, and .env is
// ignored (g.dotenvTrusted false). An interactive `run` in a terminal asks
// first; every other command says in one line on stderr what it ignored.
func (g *globals) gateWorkspace(cmd *cobra.Command, args []string, wd string) error {
	g.dotenvTrusted = true
	if g.trust {
		return nil
	}
	folder, err := trust.Folder(wd)
	if err != nil {
		return exitCode(2, err)
	}
	g.folder = folder
	src := g.agentSource
	usesProject := !src.Builtin && !src.Explicit && !filepath.IsAbs(src.Path)
	if !usesProject && !isFileAt(filepath.Join(folder, trust.DotEnvFile)) {
		return nil // nothing of the folder's is used
	}
	p := scanFolder(folder)
	store, err := trustStore()
	if err != nil {
		return exitCode(2, err)
	}
	entry, known, err := store.Lookup(folder)
	if err != nil {
		return exitCode(2, err)
	}
	if known && entry.Digest == p.Digest {
		g.trustedProject = usesProject
		return nil
	}
	stderr := cmd.ErrOrStderr()
	if mayAskTrust(cmd, args) {
		yes, err := askTrust(cmd.InOrStdin(), stderr, p, known)
		if err != nil {
			return exitCode(2, err)
		}
		if yes {
			if err := store.Trust(folder, p.Digest); err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintf(stderr, "trusted %s (kosong-host trust --revoke undoes it)\n", folder)
			g.trustedProject = usesProject
			return nil
		}
	}
	g.dotenvTrusted = false
	why := "this folder is not trusted"
	if known {
		why = "this folder's project files changed since it was trusted"
	}
	using := ""
	if usesProject {
		src, err := fallbackAgent()
		if err != nil {
			return exitCode(2, err)
		}
		g.agentPath, g.agentSource = src.Path, src
		using = " (using the built-in default agent)"
		if !src.Builtin {
			using = " (using " + src.Path + ")"
		}
	}
	fmt.Fprintf(stderr, "kosong-host: ignoring %s: %s%s; review and trust it with `kosong-host trust`, or pass --trust\n",
		p.Ignored(usesProject), why, using)
	return nil
}

// gateAncestor says whether the project agent file of dir, a folder
// above the work dir, may run: --trust, or dir trusted with its project
// files as they are now, or (an interactive run in a terminal) the user
// trusts it when asked. Otherwise one line on stderr says it is ignored.
func (g *globals) gateAncestor(cmd *cobra.Command, args []string, dir, file string) (bool, error) {
	if g.trust {
		return true, nil
	}
	folder, err := trust.Folder(dir)
	if err != nil {
		return false, exitCode(2, err)
	}
	p := scanFolder(folder)
	store, err := trustStore()
	if err != nil {
		return false, exitCode(2, err)
	}
	entry, known, err := store.Lookup(folder)
	if err != nil {
		return false, exitCode(2, err)
	}
	if known && entry.Digest == p.Digest {
		return true, nil
	}
	stderr := cmd.ErrOrStderr()
	if mayAskTrust(cmd, args) {
		fmt.Fprintf(stderr, "The project folder %s holds the agent of this sub-folder.\n", folder)
		yes, err := askTrust(cmd.InOrStdin(), stderr, p, known)
		if err != nil {
			return false, exitCode(2, err)
		}
		if yes {
			if err := store.Trust(folder, p.Digest); err != nil {
				return false, exitCode(2, err)
			}
			fmt.Fprintf(stderr, "trusted %s (kosong-host trust --revoke %s undoes it)\n", folder, folder)
			return true, nil
		}
	}
	why := "that folder is not trusted"
	if known {
		why = "that folder's project files changed since it was trusted"
	}
	fmt.Fprintf(stderr, "kosong-host: ignoring %s: %s; review and trust it with `kosong-host trust %s`, or pass --trust\n", file, why, folder)
	return false, nil
}

// reloadAllowed vets a reload of a project agent the trust store let
// run: the folder's project files must still be those trusted (a model
// that rewrote agent.yaml does not get its new rules, hooks or plugins).
// nil when the agent needs no such check (--trust, --agent, the user's
// own or the built-in agent).
func (g *globals) reloadAllowed() func() error {
	if !g.trustedProject {
		return nil
	}
	folder := g.folder
	if g.agentFolder != "" {
		folder = g.agentFolder
	}
	return projectUnchanged(folder)
}

// dotenvTrustedIn reports whether dir's .env may be read: a front end
// serving sessions of other folders (ACP) asks it of each session's
// folder. A folder other than the work dir is never asked about: its .env
// is read only when it is trusted as its files are now (or --trust); else
// one line on stderr says it is ignored.
func (g *globals) dotenvTrustedIn(dir string, stderr io.Writer) bool {
	folder, err := trust.Folder(dir)
	switch {
	case g.trust:
		return true
	case err == nil && folder == g.folder:
		return g.dotenvTrusted
	case err != nil || !isFileAt(filepath.Join(folder, trust.DotEnvFile)):
		return true // no .env to read
	}
	ok, err := trustedAsNow(folder)
	if ok {
		return true
	}
	if err != nil {
		fmt.Fprintf(stderr, "kosong-host: ignoring %s/.env: %v\n", folder, err)
		return false
	}
	fmt.Fprintf(stderr, "kosong-host: ignoring %s/.env: that folder is not trusted; review and trust it with `kosong-host trust %s`\n", folder, folder)
	return false
}

// fallbackAgent is the agent of an untrusted folder: the user's own
// ($XDG_CONFIG_HOME/kosong-host/agent.yaml) if present, else the built-in
// default.
func fallbackAgent() (agent.Source, error) {
	for _, c := range agent.Candidates(os.Getenv) {
		if filepath.IsAbs(c) && isFileAt(c) {
			return agent.Source{Path: c}, nil
		}
	}
	builtin, err := builtinAgentPath()
	if err != nil {
		return agent.Source{}, err
	}
	return agent.Source{Path: builtin, Builtin: true}, nil
}

// mayAskTrust reports whether the command may ask the user to trust the
// folder: only an interactive `run` (no prompt, no --wire) with a
// terminal on stdin and stderr.
func mayAskTrust(cmd *cobra.Command, args []string) bool {
	if cmd != cmd.Root() && (cmd.Name() != "run" || cmd.Parent() != cmd.Root()) {
		return false // only run, or kosong-host alone (a session)
	}
	flag := func(name string) string {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	if flag("wire") == "true" || flag("prompt") != "" {
		return false
	}
	if len(args) > 1 || len(args) == 1 && args[0] != flag("resume") {
		return false // a prompt: one turn
	}
	return isTerminal(cmd.InOrStdin()) && isTerminal(cmd.ErrOrStderr())
}

// askTrust shows what the project files would run and asks; the default
// (Enter, end of input) is No.
func askTrust(in io.Reader, out io.Writer, p *trust.Project, changed bool) (bool, error) {
	if changed {
		fmt.Fprintln(out, "This folder's project files changed since you trusted it. They are:")
	} else {
		fmt.Fprintln(out, "This folder has project files that kosong-host does not trust yet:")
	}
	p.Describe(out)
	fmt.Fprint(out, "They can run commands as you. Trust this folder and use them? [y/N] ")
	line, err := readLine(in)
	if err != nil {
		return false, fmt.Errorf("reading the answer: %w", err)
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}

// readLine reads one line a byte at a time, so that nothing after it is
// taken from the terminal the session reads next. End of input is an
// empty answer.
func readLine(in io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 1024 {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' || buf[0] == '\r' {
				break
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func isFileAt(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// projectUnchanged refuses a reload once folder's project files changed
// since it was trusted.
func projectUnchanged(folder string) func() error {
	return func() error {
		ok, err := trustedAsNow(folder)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not reloaded: the project files of %s changed since it was trusted; review and trust them with `kosong-host trust`", folder)
		}
		return nil
	}
}
