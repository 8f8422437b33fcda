package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/temporalengine"
)

// newQuestionsCmd is `kosong-host questions`: the questions a tool of a
// session on Temporal asks (AskUserQuestion), and answering them,
// without a server.
func newQuestionsCmd() *cobra.Command {
	e := &engineFlags{}
	var answers []string
	var dismiss bool
	cmd := &cobra.Command{
		Use:   "questions --temporal HOST:PORT SESSION [REQUEST_ID (--answer 'QUESTION=ANSWER'... | --dismiss)]",
		Short: "List or answer the questions a session on Temporal waits for",
		Long: `List the questions a tool of a session on Temporal (serve --engine temporal)
asks its user, one a line: the request id (its tool call's id), the tool,
the question and its options. With REQUEST_ID, answer that call's
questions: one --answer 'QUESTION=ANSWER' for each question (ANSWER is an
option's label, the labels of a multi-select question joined with ", ",
or your own text), or --dismiss to close them unanswered. Any attached
client may answer; the first answer wins, a later one is refused. See
docs/scaling.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuestions(cmd, e, args, answers, dismiss)
		},
	}
	addTemporalFlags(cmd.Flags(), e)
	cmd.Flags().StringArrayVar(&answers, "answer", nil, "QUESTION=ANSWER, once for each question of the request")
	cmd.Flags().BoolVar(&dismiss, "dismiss", false, "close the request's questions without answering them")
	return cmd
}

const questionsUsage = "usage: kosong-host questions --temporal HOST:PORT SESSION [REQUEST_ID (--answer 'QUESTION=ANSWER'... | --dismiss)]"

func runQuestions(cmd *cobra.Command, e *engineFlags, args, answers []string, dismiss bool) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch {
	case len(args) == 1 && (len(answers) > 0 || dismiss):
		return exitCode(2, errors.New("--answer and --dismiss go with a REQUEST_ID"))
	case len(args) == 2 && len(answers) == 0 && !dismiss:
		return exitCode(2, fmt.Errorf("request %s: give --answer 'QUESTION=ANSWER' for each question, or --dismiss", args[1]))
	case len(args) == 2 && len(answers) > 0 && dismiss:
		return exitCode(2, errors.New("--answer and --dismiss exclude each other"))
	case len(args) != 1 && len(args) != 2:
		return exitCode(2, errors.New(questionsUsage))
	}
	given := map[string]string{}
	for _, a := range answers {
		q, ans, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(q) == "" {
			return exitCode(2, fmt.Errorf("invalid --answer %q: want QUESTION=ANSWER", a))
		}
		given[strings.TrimSpace(q)] = strings.TrimSpace(ans)
	}
	ctx, sess, done, err := attachTemporal(cmd, e, args[0])
	if err != nil {
		return err
	}
	defer done()
	id := sess.ID()
	pending, err := sess.Questions(ctx)
	if err != nil {
		return exitCode(1, errors.New(oneLineErr(err)))
	}
	if len(args) == 1 {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, r := range pending {
			for _, q := range r.Questions {
				labels := make([]string, len(q.Options))
				for i, o := range q.Options {
					labels[i] = o.Label
				}
				kind := "one of"
				if q.MultiSelect {
					kind = "any of"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s: %s\n", r.ToolCallID, r.ToolName, oneLineText(q.Question), kind, strings.Join(labels, " | "))
			}
		}
		tw.Flush()
		if len(pending) == 0 {
			fmt.Fprintf(stderr, "session %s waits for no question\n", id)
		}
		return nil
	}
	req, err := pendingQuestions(id, args[1], pending)
	if err != nil {
		return exitCode(1, err)
	}
	a := approval.Answers{Dismissed: dismiss}
	if !dismiss {
		if a.Answers, err = matchAnswers(req, given); err != nil {
			return exitCode(2, fmt.Errorf("session %s: request %s: %w", id, args[1], err))
		}
	}
	if err := sess.AnswerQuestions(ctx, temporalengine.QuestionAnswer{ToolCallID: args[1], Answers: a}); err != nil {
		return exitCode(1, errors.New(oneLineErr(err)))
	}
	fmt.Fprintf(stderr, "session %s: request %s answered\n", id, args[1])
	return nil
}

// pendingQuestions is the pending request of call id.
func pendingQuestions(session, id string, pending []approval.QuestionRequest) (approval.QuestionRequest, error) {
	for _, r := range pending {
		if r.ToolCallID == id {
			return r, nil
		}
	}
	return approval.QuestionRequest{}, fmt.Errorf("session %s: request %s: no such question is pending (answered already, or never asked)", session, id)
}

// matchAnswers checks the answers given against the request's questions:
// each question answered once, no answer to a question not asked.
func matchAnswers(req approval.QuestionRequest, given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, q := range req.Questions {
		ans, ok := given[strings.TrimSpace(q.Question)]
		if !ok {
			return nil, fmt.Errorf("no --answer for the question %q", q.Question)
		}
		out[q.Question] = ans
		delete(given, strings.TrimSpace(q.Question))
	}
	for q := range given {
		return nil, fmt.Errorf("--answer to %q, which the request does not ask", q)
	}
	return out, nil
}

// oneLineText is s on one line.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
