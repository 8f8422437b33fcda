package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/temporalengine"
)

// approvalDecisions are the answers of `kosong-host approvals`.
var approvalDecisions = map[string]approval.Answer{
	"approve":             approval.Approve,
	"approve-for-session": approval.ApproveForSession,
	"reject":              approval.Reject,
}

// newApprovalsCmd is `kosong-host approvals`: the pending approvals of a
// session on Temporal, and answering one, without a server.
func newApprovalsCmd() *cobra.Command {
	e := &engineFlags{}
	var feedback string
	cmd := &cobra.Command{
		Use:   "approvals --temporal HOST:PORT SESSION [REQUEST_ID approve|approve-for-session|reject [--feedback TEXT]]",
		Short: "List or answer the approvals a session on Temporal waits for",
		Long: `List the approvals a session on Temporal (run or serve --engine temporal)
waits for, one a line: the request id (its tool call's id), the tool, the
action and the description. With REQUEST_ID and a decision, answer that
one: approve, approve-for-session (the same action of the same tool is
approved for the rest of the session) or reject (--feedback goes to the
model with the rejection). Any attached client may answer; the first
answer wins, a later one is refused. See docs/scaling.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprovals(cmd, e, args, feedback, cmd.Flags().Changed("feedback"))
		},
	}
	addTemporalFlags(cmd.Flags(), e)
	cmd.Flags().StringVar(&feedback, "feedback", "", "with reject: what the model is told")
	return cmd
}

func runApprovals(cmd *cobra.Command, e *engineFlags, args []string, feedback string, hasFeedback bool) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var decision approval.Answer
	switch len(args) {
	case 1:
		if hasFeedback {
			return exitCode(2, errors.New("--feedback goes with the decision reject"))
		}
	case 3:
		d, ok := approvalDecisions[args[2]]
		switch {
		case !ok:
			return exitCode(2, fmt.Errorf("invalid decision %q for request %s of session %s: use approve, approve-for-session or reject", args[2], args[1], args[0]))
		case hasFeedback && d != approval.Reject:
			return exitCode(2, errors.New("--feedback goes with the decision reject"))
		}
		decision = d
	default:
		return exitCode(2, errors.New("usage: kosong-host approvals --temporal HOST:PORT SESSION [REQUEST_ID approve|approve-for-session|reject [--feedback TEXT]]"))
	}
	ctx, sess, done, err := attachTemporal(cmd, e, args[0])
	if err != nil {
		return err
	}
	defer done()
	id := sess.ID()
	if len(args) == 1 {
		pending, err := sess.Pending(ctx)
		if err != nil {
			return exitCode(1, errors.New(oneLineErr(err)))
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, p := range pending {
			r := p.Request
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ToolCallID, r.ToolName, r.Action, strings.Join(strings.Fields(r.Description), " "))
		}
		tw.Flush()
		if len(pending) == 0 {
			fmt.Fprintf(stderr, "session %s waits for no approval\n", id)
		}
		return nil
	}
	if err := sess.Answer(ctx, temporalengine.Answer{ToolCallID: args[1], Answer: decision, Feedback: feedback}); err != nil {
		if temporalengine.NotPending(err) {
			return exitCode(1, fmt.Errorf("session %s: request %s: no such approval is pending (answered already, or never asked)", id, args[1]))
		}
		return exitCode(1, errors.New(oneLineErr(err)))
	}
	fmt.Fprintf(stderr, "session %s: request %s answered: %s\n", id, args[1], args[2])
	return nil
}

// attachTemporal connects to the Temporal server of e and attaches to
// the session (its id, or its workflow id); done closes the connection.
// Interrupts and a bound of four dial timeouts end ctx.
func attachTemporal(cmd *cobra.Command, e *engineFlags, session string) (ctx context.Context, sess *temporalengine.Session, done func(), err error) {
	id := strings.TrimPrefix(session, temporalengine.WorkflowIDPrefix)
	if id == "" {
		return nil, nil, nil, exitCode(2, errors.New("the session id is empty"))
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	c, err := dialTemporal(ctx, e, cmd.ErrOrStderr())
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout*4)
	return ctx, temporalengine.Attach(c, id).WithDataConverter(e.dc), func() { cancel(); c.Close(); stop() }, nil
}

// oneLineErr is err's first line.
func oneLineErr(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}
