package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List, describe and call the tools of an agent",
	}
	cmd.AddCommand(newToolsListCmd(g), newToolsDescribeCmd(g), newToolsCallCmd(g))
	return cmd
}

// loadForTools loads the agent for a tools command: a throwaway session
// whose state dir is removed afterwards.
func (g *globals) loadForTools(ctx context.Context, decider approval.Decider) (*agent.Agent, func(), error) {
	stateDir, err := os.MkdirTemp("", "kosong-tools-")
	if err != nil {
		return nil, nil, exitCode(2, err)
	}
	opts, err := g.loadOptions(decider, fmt.Sprintf("tools-%d", os.Getpid()), stateDir)
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, nil, exitCode(2, err)
	}
	if err := conversation.CheckPolicy(conversation.Config{AgentPath: g.agentPath, WorkDir: opts.WorkDir, ProjectFolder: g.agentFolder, Load: opts}); err != nil {
		os.RemoveAll(stateDir)
		return nil, nil, exitCode(2, err) // the admin policy, as every session's
	}
	a, err := agent.Load(ctx, g.agentPath, opts)
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, nil, exitCode(2, pluginHint(err, opts.PluginDirs))
	}
	a.Source = g.agentSource
	return a, func() { a.Close(); os.RemoveAll(stateDir) }, nil
}

// withAgent loads the agent for a tools command, runs fn with it and stops
// it; SIGINT and SIGTERM cancel ctx.
func (g *globals) withAgent(cmd *cobra.Command, decider approval.Decider, fn func(ctx context.Context, a *agent.Agent) error) error {
	ctx, cancel := signalContext(cmd.Context())
	defer cancel()
	a, done, err := g.loadForTools(ctx, decider)
	if err != nil {
		return err
	}
	defer done()
	// A tools command shows and calls the tools of slow MCP servers too.
	_ = a.WaitMCP(ctx)
	return fn(ctx, a)
}

// signalContext is cancelled on SIGINT or SIGTERM.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

func newToolsListCmd(g *globals) *cobra.Command {
	var asJSON, check bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agent's tools (plugins' from the declaration cache, MCP servers' started): status, capabilities, annotations, source",
		Long: `List the agent's tools: status, capabilities, annotations, source.

A plugin whose declaration is in the declaration cache is not started:
its tools are listed as it declared them for the same binary and inputs.
--check (or --eager-plugins) starts every plugin and lists what it
declares now. MCP servers are always started.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g.eagerPlugins = g.eagerPlugins || check
			return g.withAgent(cmd, approval.Deny{}, func(_ context.Context, a *agent.Agent) error {
				out := cmd.OutOrStdout()
				if n := agent.OverrideNotice(a.Overridden); n != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+n)
				}
				// modelName is the name the model sees, when it differs.
				modelName := func(name string) string {
					if m, ok := a.Toolset.ModelNameOf(name); ok && m != name {
						return m
					}
					return ""
				}
				// annotations are a loaded tool's, nil when it declares none.
				annotations := func(name string) *toolset.Annotations {
					t, ok := a.Toolset.Find(name)
					if !ok {
						return nil
					}
					if ann := toolset.AnnotationsOf(t); ann != (toolset.Annotations{}) {
						return &ann
					}
					return nil
				}
				statuses := a.Statuses()
				if asJSON {
					type row struct {
						agent.ToolStatus
						ModelName   string               `json:"model_name,omitempty"`
						Annotations *toolset.Annotations `json:"annotations,omitempty"`
					}
					rows := make([]row, len(statuses))
					for i, st := range statuses {
						rows[i] = row{ToolStatus: st, ModelName: modelName(st.Name), Annotations: annotations(st.Name)}
					}
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					return enc.Encode(rows)
				}
				fmt.Fprintf(out, "agent %s from %s\n", a.Spec.Name, a.Source)
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSTATUS\tCAPABILITIES\tANNOTATIONS\tSOURCE")
				for _, st := range statuses {
					ann := "-"
					if declared := annotations(st.Name); declared != nil {
						ann = annotationWords(*declared)
					}
					if m := modelName(st.Name); m != "" {
						st.Name += " (as " + m + ")"
					}
					status := st.Status
					if st.Reason != "" {
						status += ": " + st.Reason
					}
					caps := strings.Join(st.Capabilities, ", ")
					if caps == "" {
						caps = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Name, status, caps, ann, st.Source)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for machines")
	cmd.Flags().BoolVar(&check, "check", false, "start every plugin and list what it declares now, not what the declaration cache kept")
	return cmd
}

func newToolsDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a tool's description, parameters schema, capabilities, timeout and annotations",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withAgent(cmd, approval.Deny{}, func(_ context.Context, a *agent.Agent) error {
				t, ok := a.Toolset.Find(args[0])
				if !ok {
					return toolNotFound(args[0], g.agentPath, a.Toolset.Names())
				}
				s := t.Spec()
				var schema any
				_ = json.Unmarshal(s.Parameters, &schema)
				pretty, _ := json.MarshalIndent(schema, "", "  ")
				out := cmd.OutOrStdout()
				timeout := s.Timeout.String()
				if s.Timeout == 0 {
					timeout = "set by the source (MCP: an idle timeout, reset by progress)"
				}
				caps := strings.Join(s.Capabilities, ", ")
				if caps == "" {
					caps = "-"
				}
				ann := annotationWords(toolset.AnnotationsOf(t))
				if ann == "" {
					ann = "none declared"
				}
				fmt.Fprintf(out, "Name:         %s\nSource:       %s\nCapabilities: %s\nTimeout:      %s\nAnnotations:  %s\n\n%s\n\nParameters:\n%s\n",
					s.Name, s.Source, caps, timeout, ann, s.Description, pretty)
				return nil
			})
		},
	}
}

// annotationWords says what a tool declares it does, e.g. "read-only,
// closed-world"; unknown annotations are left out (and what read-only or
// destructive implies of the other), so a tool declaring none has "".
func annotationWords(a toolset.Annotations) string {
	var words []string
	add := func(b *bool, yes, no string) {
		if b == nil {
			return
		}
		if *b {
			words = append(words, yes)
		} else {
			words = append(words, no)
		}
	}
	readOnly, destructive := a.ReadOnly, a.Destructive
	if a.IsReadOnly() && destructive != nil && !*destructive {
		destructive = nil
	}
	if destructive != nil && *destructive && readOnly != nil && !*readOnly {
		readOnly = nil
	}
	add(readOnly, "read-only", "not read-only")
	add(destructive, "destructive", "not destructive")
	add(a.Idempotent, "idempotent", "not idempotent")
	add(a.OpenWorld, "open-world", "closed-world")
	return strings.Join(words, ", ")
}

func newToolsCallCmd(g *globals) *cobra.Command {
	var yolo bool
	cmd := &cobra.Command{
		Use:   "call NAME [JSON]",
		Short: "Call one tool through its plugin, as the agent loop would",
		Long: "Call one tool through the same launcher and toolset that `run` uses. The output goes to stdout,\n" +
			"the error message to stderr. JSON defaults to stdin when it is not a terminal, else {}.\n" +
			"Exit codes: 0 ok, 1 the tool returned an error or was rejected, 2 usage, spec or load error (an unknown tool too).",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			argsJSON, err := callArguments(cmd.InOrStdin(), args)
			if err != nil {
				return exitCode(2, err)
			}
			var decider approval.Decider = approval.Deny{}
			if yolo {
				decider = approval.Yolo{}
			}
			return g.withAgent(cmd, decider, func(ctx context.Context, a *agent.Agent) error {
				if _, ok := a.Toolset.Find(args[0]); !ok {
					return toolNotFound(args[0], g.agentPath, a.Toolset.Names())
				}
				start := time.Now()
				call := providers.ToolCall{ID: fmt.Sprintf("tools-call-%d", start.UnixNano()), Name: args[0], Arguments: argsJSON}
				r := a.Toolset.Handle(ctx, call).Result()
				g.logger.Debug("tool call done", "tool", call.Name, "duration", time.Since(start))
				return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), r, yolo)
			})
		},
	}
	cmd.Flags().BoolVar(&yolo, "yolo", false, "approve every action the tool asks approval for")
	return cmd
}

// callArguments reads the JSON arguments from the command line or stdin.
func callArguments(stdin io.Reader, args []string) (string, error) {
	if len(args) == 2 {
		return args[1], nil
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return "{}", nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
	if err != nil {
		return "", fmt.Errorf("read arguments from stdin: %w", err)
	}
	return string(b), nil
}

// imageLine describes an image of a result in one line: "[image
// image/png, 1234 bytes]" for a data: URL, "[image URL]" else.
func imageLine(url string) string {
	meta, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
	if !ok || !strings.HasPrefix(url, "data:") {
		return "[image " + url + "]"
	}
	mime, _, _ := strings.Cut(meta, ";")
	if mime == "" {
		mime = "image"
	}
	size := len(data)
	if strings.HasSuffix(meta, ";base64") {
		size = base64.StdEncoding.DecodedLen(len(data)) - strings.Count(data[max(0, len(data)-2):], "=")
	}
	return fmt.Sprintf("[image %s, %d bytes]", mime, size)
}

// printResult prints the output on stdout and the message on stderr, and
// maps the result to the exit code.
func printResult(stdout, stderr io.Writer, r toolset.Result, yolo bool) error {
	if text := r.OutputText(); text != "" {
		fmt.Fprint(stdout, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	for _, p := range r.Output {
		if p.Type == providers.PartImage {
			fmt.Fprintln(stdout, imageLine(p.ImageURL))
		}
	}
	if r.Message != "" {
		fmt.Fprintln(stderr, r.Message)
	}
	switch {
	case r.Kind == toolset.Rejected && !yolo:
		fmt.Fprintln(stderr, "(tools call asks no one: run it with --yolo to approve the tool's actions)")
		return exitCode(1, nil)
	case r.IsError():
		return exitCode(1, nil)
	}
	return nil
}
