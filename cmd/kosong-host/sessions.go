package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/providers"
)

func newSessionsCmd() *cobra.Command {
	var all, asJSON bool
	var srv serverFlag
	cmd := &cobra.Command{
		Use:         "sessions",
		Short:       "List the sessions of this folder (--all: of every folder), newest first",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if srv.url != "" {
				return listServerSessions(cmd, srv, asJSON)
			}
			wd, err := os.Getwd()
			if err != nil {
				return exitCode(2, err)
			}
			filter := wd
			if all {
				filter = ""
			}
			list, err := session.List(session.Options{}, filter)
			if err != nil {
				return exitCode(2, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				rows := make([]sessionRow, 0, len(list))
				for _, s := range list {
					row := sessionRow{ID: s.ID, Updated: s.Updated, WorkDir: s.WorkDir, Agent: s.Agent,
						AgentFile: s.AgentFile, FirstPrompt: s.FirstPrompt}
					if s.HasTotals {
						row.Totals = &s.Totals
					}
					rows = append(rows, row)
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(list) == 0 {
				if all {
					fmt.Fprintln(out, "no sessions yet")
				} else {
					fmt.Fprintf(out, "no sessions in %s (kosong-host sessions --all lists every folder's)\n", wd)
				}
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tWORK DIR\tAGENT\tTURNS\tTOKENS\tCOST\tFIRST PROMPT")
			for _, s := range list {
				turns, tokens, cost := totalsColumns(s)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Updated.Local().Format("2006-01-02 15:04"), orDash(s.WorkDir),
					orDash(s.Agent), turns, tokens, cost, orDash(clip(s.FirstPrompt, 60)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list the sessions of every folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for machines")
	srv.add(cmd)
	return cmd
}

type sessionRow struct {
	ID          string    `json:"id"`
	Updated     time.Time `json:"updated"`
	WorkDir     string    `json:"work_dir"`
	Agent       string    `json:"agent"`
	AgentFile   string    `json:"agent_file,omitempty"`
	FirstPrompt string    `json:"first_prompt"`
	// Totals sum the session's turns (absent for a session without them).
	Totals *session.Totals `json:"totals,omitempty"`
}

// totalsColumns are the TURNS, TOKENS and COST of a session: "-" where
// unknown (a session from before totals were kept; a cost without prices).
func totalsColumns(s session.Info) (turns, tokens, cost string) {
	if !s.HasTotals {
		return "-", "-", "-"
	}
	turns, tokens, cost = strconv.Itoa(s.Totals.Turns), strconv.FormatInt(s.Totals.Total(), 10), "-"
	if s.Totals.Priced {
		cost = fmt.Sprintf("$%.4f", s.Totals.CostUSD)
	}
	return turns, tokens, cost
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip folds s onto one line of at most n runes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// pickSession is the value of --resume given without an id (the help
// shows it: --resume string[="pick"]); no session id is a word.
const pickSession = "pick"

// addSessionFlags adds -c/--continue and --resume [ID] to run.
func addSessionFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.resume, "resume", "", `continue a session with its history: a session id ("last": the newest of this folder); without an id, pick one of this folder's sessions`)
	fl.Lookup("resume").NoOptDefVal = pickSession
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of this folder")
}

// runArgs lets `run --resume ID` give the id as a separate word (a flag
// whose value is optional takes it only as --resume=ID).
func runArgs(f *runFlags) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && f.resume == pickSession {
			f.resume = args[0]
			f.resumeFromArg = true
		}
		return nil
	}
}

// promptArgs are the positional arguments that make the prompt
// (`run "fix the test"`): none when the only one was --resume's session id.
func promptArgs(f *runFlags, args []string) []string {
	if f.resumeFromArg {
		return nil
	}
	return args
}

// runResume is the session a run continues: -c/--continue or --resume
// last (session.Last: the newest of this folder), --resume ID, or
// --resume alone (a numbered list of this folder's sessions to pick from,
// read from the terminal); "" starts a new session.
func runResume(f *runFlags, workDir string, stdin io.Reader, prompts io.Writer) (string, error) {
	if f.cont && f.resume != "" {
		return "", errors.New("--continue and --resume both pick a session: give one of them")
	}
	switch {
	case f.cont:
		return session.Last, nil
	case f.resume == pickSession:
		if !isTerminal(stdin) {
			return "", errors.New("--resume without an id asks which session in a terminal; here give the id (kosong-host sessions lists them) or use -c for the newest")
		}
		list, err := session.List(session.Options{}, workDir)
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", fmt.Errorf("there is no session of %s to resume (kosong-host sessions --all lists every session)", workDir)
		}
		return pick(list, stdin, prompts)
	}
	return f.resume, nil
}

// pick shows up to 20 sessions, numbered, and reads a number from in.
func pick(list []session.Info, in io.Reader, out io.Writer) (string, error) {
	if len(list) > 20 {
		list = list[:20]
	}
	fmt.Fprintln(out, "Sessions of this folder, newest first:")
	for i, s := range list {
		fmt.Fprintf(out, "  %2d) %s  %s  %s\n", i+1, s.Updated.Local().Format("2006-01-02 15:04"), s.ID, orDash(clip(s.FirstPrompt, 50)))
	}
	r := bufio.NewReader(in)
	for {
		fmt.Fprintf(out, "resume which [1-%d]: ", len(list))
		line, err := r.ReadString('\n')
		n, perr := strconv.Atoi(strings.TrimSpace(line))
		if perr == nil && n >= 1 && n <= len(list) {
			return list[n-1].ID, nil
		}
		if err != nil {
			return "", errors.New("no session picked")
		}
		fmt.Fprintf(out, "  please answer a number from 1 to %d\n", len(list))
	}
}

// printRecap shows the last exchange of a resumed session.
func printRecap(w io.Writer, id string, history []providers.Message) {
	user, answer := session.LastExchange(history)
	if user == "" {
		fmt.Fprintf(w, "resumed session %s (no turn saved yet)\n", id)
		return
	}
	fmt.Fprintf(w, "resumed session %s; last exchange:\n  you: %s\n", id, clip(user, 200))
	if answer != "" {
		fmt.Fprintf(w, "  agent: %s\n", clip(answer, 300))
	}
}

// printResumeHint tells, on leaving, how to come back to the session.
func printResumeHint(w io.Writer, id string) {
	fmt.Fprintf(w, "to resume this session: kosong-host run --resume %s (or kosong-host run -c in this folder)\n", id)
}

// openSessionID resolves -c and --resume for a front end that opens the
// session itself: the id, or "" for a new session. (--resume without an id
// has no terminal to pick in there.)
func openSessionID(f *runFlags, workDir string) (string, bool, error) {
	switch {
	case f.cont && f.resume != "":
		return "", false, errors.New("--continue and --resume both pick a session: give one of them")
	case f.cont || f.resume == session.Last:
		latest, err := session.Latest(session.Options{}, workDir)
		return latest.ID, err == nil, err
	case f.resume == pickSession:
		return "", false, errors.New("--resume without an id asks which session in a terminal; here give the id (kosong-host sessions lists them) or use -c for the newest")
	}
	return f.resume, f.resume != "", nil
}
