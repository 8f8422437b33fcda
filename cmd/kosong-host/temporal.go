package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/host/temporalengine"
	"github.com/kosong-host/kosong-host/providers"
)

// engineFlags say where a session's turns run: in this process (the
// default) or on Temporal.
type engineFlags struct {
	engine    string
	temporal  string
	namespace string
	taskQueue string
	heartbeat time.Duration
	claimDir  string
	claimTTL  time.Duration
	// payloadKey is the payload encryption key file ("" none).
	payloadKey string
	// dc is the data converter dialTemporal's client was given (with the
	// payload key's codec): sessions read their feeds with it.
	dc converter.DataConverter
}

func addTemporalFlags(fl *pflag.FlagSet, e *engineFlags) {
	fl.StringVar(&e.temporal, "temporal", "", "the Temporal server's frontend, HOST:PORT")
	fl.StringVar(&e.namespace, "namespace", "default", "the Temporal namespace")
	fl.StringVar(&e.taskQueue, "task-queue", temporalengine.DefaultTaskQueue, "the Temporal task queue of the session workflows and their workers")
	addPayloadKeyFlag(fl, e)
}

// addEngineFlags adds --engine and the Temporal flags to run.
func addEngineFlags(fl *pflag.FlagSet, e *engineFlags) {
	fl.StringVar(&e.engine, "engine", "inprocess", "where the session's turns run: inprocess, or temporal (on the workers of --temporal; see docs/scaling.md)")
	addTemporalFlags(fl, e)
	fl.DurationVar(&e.heartbeat, "heartbeat-timeout", temporalengine.DefaultHeartbeat, "with --engine temporal: how soon a stopped worker is noticed (the heartbeat timeout of its tool calls, model requests and sessions)")
}

// dialTimeout bounds the connection to the Temporal server.
const dialTimeout = 15 * time.Second

// dialTemporal connects to the Temporal server of e.
func dialTemporal(ctx context.Context, e *engineFlags, stderr io.Writer) (client.Client, error) {
	if e.temporal == "" {
		return nil, exitCode(2, errors.New("--temporal HOST:PORT is required: the Temporal server's frontend"))
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	opts := client.Options{HostPort: e.temporal, Namespace: e.namespace, Logger: logger}
	if err := e.applyPayloadKey(&opts); err != nil {
		return nil, err
	}
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, exitCode(1, fmt.Errorf("connecting to Temporal at %s: %w", e.temporal, err))
	}
	return c, nil
}

// runTemporal runs one turn (-p) of a new session on Temporal: the
// session workflow's workers run it; this process only starts it and
// waits for its answer.
func runTemporal(cmd *cobra.Command, f *runFlags, args []string) error {
	stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch {
	case f.engine.engine != "temporal":
		return exitCode(2, fmt.Errorf("invalid --engine %q: use inprocess or temporal", f.engine.engine))
	case f.outputFormat != "text" && f.outputFormat != "stream-json":
		return exitCode(2, fmt.Errorf("invalid --output-format %q: use text or stream-json", f.outputFormat))
	case f.wire || f.resume != "" || f.cont:
		return exitCode(2, errors.New("--engine temporal runs a new session's one turn (-p): --wire, --resume and --continue are for the in-process engine"))
	case f.engine.heartbeat < time.Second:
		return exitCode(2, fmt.Errorf("invalid --heartbeat-timeout %s: it must be at least 1s", f.engine.heartbeat))
	case f.maxSteps < 1:
		return exitCode(2, fmt.Errorf("invalid --max-steps-per-turn %d: it must be at least 1", f.maxSteps))
	}
	mode, err := decideMode(f, args, stdin, isTerminal(stdin), stderr)
	if err != nil {
		return exitCode(2, err)
	}
	if !mode.oneShot {
		return exitCode(2, errors.New("--engine temporal runs one turn: give the prompt with -p"))
	}
	workDir, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := dialTemporal(ctx, &f.engine, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	sess, err := temporalengine.Start(ctx, c, f.engine.taskQueue, temporalengine.SessionInput{
		WorkDir: workDir, Yolo: f.yolo, Unattended: true, PlanMode: f.plan, MaxStepsPerTurn: f.maxSteps, Heartbeat: f.engine.heartbeat})
	if err != nil {
		return exitCode(1, err)
	}
	sess.WithDataConverter(f.engine.dc)
	fmt.Fprintf(stderr, "session %s on Temporal (workflow %s)\n", sess.ID(), sess.WorkflowID())
	return engineOneShot(ctx, sess, mode.input, stdout, stderr, f.outputFormat == "stream-json")
}

// engineOneShot runs one turn of a new session of an engine and prints
// its answer as oneShot does in text mode, or with streamJSON the
// events of what the engine knows once the turn ends (engineEvents).
func engineOneShot(ctx context.Context, eng conversation.Engine, input string, stdout, stderr io.Writer, streamJSON bool) error {
	if o, ok := eng.(observedEngine); ok { // live (temporal_stream.go)
		return engineOneShotLive(ctx, o, input, stdout, stderr, streamJSON)
	}
	defer eng.Close()
	res, err := eng.Turn(ctx, input)
	history := eng.History()
	text, answered := finalText(history)
	if streamJSON {
		w := streamjson.NewWriter(stdout)
		for _, ev := range engineEvents(eng.ID(), history, res, err) {
			_ = w.Write(ev)
		}
		return turnExit(res, err, 0, true)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error: "+err.Error())
	} else if text != "" && answered {
		fmt.Fprint(stdout, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	return turnExit(res, err, 0, false)
}

// engineEvents are the stream-json events of a new session's turn run by
// an engine that reports no deltas: from the messages it added to the
// history (the final text, reasoning, tool calls and results of each
// step), then turn_end and result. The session event has only the id:
// the agent, provider, model and tools are the workers'.
func engineEvents(id string, history []providers.Message, res loop.TurnResult, err error) []any {
	evs := []any{streamjson.SessionEvent{Type: "session", SessionID: id, Tools: []string{}}}
	step, names := 0, map[string]string{}
	for _, m := range history {
		switch m.Role {
		case providers.RoleAssistant:
			step++
			evs = append(evs, streamjson.StepStartEvent{Type: "step_start", Step: step, Attempt: 1})
			if m.Reasoning != "" {
				evs = append(evs, streamjson.TextEvent{Type: "reasoning", Step: step, Text: m.Reasoning})
			}
			if t := m.Text(); t != "" {
				evs = append(evs, streamjson.TextEvent{Type: "text", Step: step, Text: t})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				evs = append(evs, streamjson.ToolCallEvent{Type: "tool_call", Step: step, ID: c.ID, Name: c.Name, Arguments: c.Arguments, Truncated: c.Truncated})
			}
		case providers.RoleTool:
			status := "ok"
			if m.IsError {
				status = "error"
			}
			evs = append(evs, streamjson.ToolResultEvent{Type: "tool_result", Step: step, ID: m.ToolCallID, Name: names[m.ToolCallID],
				Status: status, IsError: m.IsError, Output: m.Text()})
		}
	}
	text, _ := finalText(history)
	end := streamjson.TurnEndEvent{Type: "turn_end", Steps: res.Steps, Reason: string(res.Reason), Usage: res.Usage, StopReason: string(res.ModelStop)}
	result := streamjson.ResultEvent{Type: "result", Subtype: streamjson.Subtype(string(res.Reason), err), Text: text,
		StopReason: string(res.Reason), Usage: res.Usage, SessionID: id, Steps: res.Steps, ExitCode: turnCode(res, err, 0),
		NumTurns: step}
	if err != nil {
		end.Error, result.Error = err.Error(), err.Error()
	}
	return append(evs, end, result)
}

// newWorkerCmd is `kosong-host worker`: a Temporal worker that runs
// session workflows and their activities and hosts their plugins.
func newWorkerCmd(g *globals) *cobra.Command {
	f, e := &runFlags{}, &engineFlags{}
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run a Temporal worker: it runs sessions started with --engine temporal and hosts their plugins",
		Long: `Run a Temporal worker for sessions started with run --engine temporal.

The worker runs the session workflows of the task queue and their
activities: each model request (with this worker's provider, model and
keys, which never enter the workflow's history) and each tool call (with
this worker's agent and plugins, opened for the session's folder). A
session's tool calls run on one worker; when it stops, the session goes on
on another. It runs until SIGINT or SIGTERM. See docs/scaling.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWorker(cmd, g, f, e)
		},
	}
	fl := cmd.Flags()
	addTemporalFlags(fl, e)
	fl.StringVar(&f.provider, "provider", "", "model provider (as for run)")
	fl.StringVar(&f.model, "model", "", "a model alias of the configuration file, or a model name")
	fl.StringVar(&f.config, "config", "", "configuration file of providers and model aliases")
	fl.StringVar(&f.baseURL, "base-url", "", "API base URL (overrides {PROVIDER}_BASE_URL)")
	fl.StringVar(&f.script, "script", "", "script file of the scripted provider")
	fl.Int64Var(&f.contextSize, "max-context-size", 0, "the model's context window in tokens")
	fl.DurationVar(&e.claimTTL, "claim-ttl", temporalengine.DefaultClaimTTL, "remove the claim files no model request read for this long (sessions that never closed; a closed session's are removed at once); 0 keeps them")
	fl.StringVar(&e.claimDir, "claim-dir", "", "where tool outputs over 1 MiB are stored out of the workflow history (default $XDG_STATE_HOME/kosong-host/temporal-claims; share it between the workers a session may move to)")
	return cmd
}

func runWorker(cmd *cobra.Command, g *globals, f *runFlags, e *engineFlags) error {
	stderr := cmd.ErrOrStderr()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := g.conversationConfig(f, "/"); err != nil {
		return exitCode(2, err)
	}
	claimDir := e.claimDir
	switch {
	case e.claimTTL < 0:
		return exitCode(2, fmt.Errorf("invalid --claim-ttl %s: it must not be negative", e.claimTTL))
	case claimDir != "" && !filepath.IsAbs(claimDir):
		return exitCode(2, fmt.Errorf("invalid --claim-dir %q: not an absolute path", claimDir))
	case claimDir == "":
		root, err := session.Root(nil)
		if err != nil {
			return exitCode(2, err)
		}
		claimDir = filepath.Join(filepath.Dir(root), "temporal-claims")
	}
	c, err := dialTemporal(ctx, e, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	acts := temporalengine.NewActivities(func(ctx context.Context, req temporalengine.OpenRequest, ask approval.Asker) (temporalengine.Hosted, error) {
		cfg, err := g.conversationConfig(f, req.WorkDir)
		if err != nil {
			return nil, err
		}
		switch {
		case req.Yolo:
			cfg.Approval = approval.ModeYolo
		case req.Unattended:
			cfg.Approval = approval.ModeUnattended
		default: // asked of the session's clients through the workflow
			cfg.Approval, cfg.Ask = approval.ModeAsk, ask
		}
		if req.Questions != nil { // asked through the workflow too
			cfg.Questions = req.Questions
		}
		cfg.Observer = loop.ObserverFunc(func(loop.Event) {})
		// Plan mode is the workflow's (its plan_mode signal): the model's
		// EnterPlanMode and ExitPlanMode would change only this worker's.
		cfg.NoPlanTools = true
		return conversation.Open(context.WithoutCancel(ctx), cfg)
	})
	defer acts.Close()
	acts.StoreClaims(claimDir, 0)
	go acts.SweepClaims(ctx, e.claimTTL, func(err error) { fmt.Fprintln(stderr, "claim sweep: "+err.Error()) })
	w := temporalengine.NewWorker(c, e.taskQueue, acts)
	if err := w.Start(); err != nil {
		return exitCode(1, fmt.Errorf("starting the worker: %w", err))
	}
	fmt.Fprintf(stderr, "worker of task queue %s on Temporal %s (namespace %s)\n", e.taskQueue, e.temporal, e.namespace)
	<-ctx.Done()
	w.Stop()
	return nil
}
