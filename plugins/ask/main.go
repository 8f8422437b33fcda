// Package ask is AskUserQuestion: the model asks the user structured
// questions (a header, 2-4 options with descriptions, single or multiple
// choice) and waits for the answers. The questions go through the host's
// UserInput capability (the terminal's picker, a wire or ACP client);
// where no one can answer (-p, unattended runs) the host offers none and
// the tool is skipped at load.
package ask

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed ask_user_question.md
var descriptions embed.FS

// Kimi's limits.
const (
	MinQuestions = 1
	MaxQuestions = 4
	MinOptions   = 2
	MaxOptions   = 4
)

// Option is one answer the user may pick.
type Option struct {
	Label       string `json:"label" jsonschema:"A short answer, 1-5 words." minLength:"1"`
	Description string `json:"description" jsonschema:"What choosing this option means."`
}

// Question is one question.
type Question struct {
	Question    string   `json:"question" jsonschema:"The full question, ending with a question mark." minLength:"1"`
	Header      string   `json:"header" jsonschema:"A short tag for the question, at most 12 characters."`
	Options     []Option `json:"options" jsonschema:"2-4 possible answers; do not add an Other option." minItems:"2" maxItems:"4"`
	MultiSelect bool     `json:"multi_select,omitempty" jsonschema:"Whether several options may be chosen (default false)."`
}

// Params are AskUserQuestion's arguments.
type Params struct {
	Questions []Question `json:"questions" jsonschema:"The questions, 1-4." minItems:"1" maxItems:"4"`
}

// Texts the model sees.
const (
	answeredMessage  = "User has answered."
	dismissedMessage = "The user dismissed the questions without answering. Make your own decision, or ask in your reply."
)

// AskUserQuestion asks through the host's UserInput.
type AskUserQuestion struct{ in pluginsdk.UserInput }

// NewAskUserQuestion constructs the tool; on a host where no one can
// answer, the SDK skips it (the constructor's UserInput is not offered).
func NewAskUserQuestion(in pluginsdk.UserInput) *AskUserQuestion { return &AskUserQuestion{in: in} }

// check validates the questions with errors naming the question; the host
// validates the schema first, and this holds for direct calls too.
func check(p Params) error {
	if n := len(p.Questions); n < MinQuestions || n > MaxQuestions {
		return fmt.Errorf("questions: %d given, want %d to %d", n, MinQuestions, MaxQuestions)
	}
	seen := map[string]bool{}
	for i, q := range p.Questions {
		where := fmt.Sprintf("questions[%d]", i)
		if strings.TrimSpace(q.Question) == "" {
			return fmt.Errorf("%s.question is empty", where)
		}
		if seen[q.Question] {
			return fmt.Errorf("%s.question %q is asked twice", where, q.Question)
		}
		seen[q.Question] = true
		if n := len(q.Options); n < MinOptions || n > MaxOptions {
			return fmt.Errorf("%s.options: %d given, want %d to %d", where, n, MinOptions, MaxOptions)
		}
		labels := map[string]bool{}
		for j, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" {
				return fmt.Errorf("%s.options[%d].label is empty", where, j)
			}
			if labels[o.Label] {
				return fmt.Errorf("%s.options[%d].label %q is given twice", where, j, o.Label)
			}
			labels[o.Label] = true
		}
	}
	return nil
}

// Call asks the questions and returns the answers as JSON.
func (t *AskUserQuestion) Call(ctx context.Context, p Params) pluginsdk.Result {
	if err := check(p); err != nil {
		return pluginsdk.Error("Invalid questions: " + err.Error()).WithBrief("Invalid questions")
	}
	qs := make([]pluginsdk.Question, 0, len(p.Questions))
	for _, q := range p.Questions {
		sq := pluginsdk.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			sq.Options = append(sq.Options, pluginsdk.QuestionOption{Label: o.Label, Description: o.Description})
		}
		qs = append(qs, sq)
	}
	a, err := t.in.Ask(ctx, qs)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Failed to ask the user: %v", err)).WithBrief("Question failed")
	}
	answers := a.Answers
	if answers == nil || a.Dismissed {
		answers = map[string]string{}
	}
	out, _ := json.Marshal(map[string]map[string]string{"answers": answers})
	if a.Dismissed || len(answers) == 0 {
		return pluginsdk.Ok(string(out)).WithMessage(dismissedMessage).WithBrief("Dismissed")
	}
	return pluginsdk.Ok(string(out)).WithMessage(answeredMessage).WithBrief("User has answered")
}

func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[Params]("AskUserQuestion", "Ask the user questions.", NewAskUserQuestion, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "ask_user_question.md", nil)),
	}
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-ask).
func Tools() []pluginsdk.Definition { return definitions() }
