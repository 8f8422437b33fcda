package ask

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata/")

func TestSchemasGolden(t *testing.T) { plugintest.CheckSchemas(t, *update, definitions()...) }

func options(n int) string {
	var os []string
	for i := range n {
		os = append(os, fmt.Sprintf(`{"label":"opt%d","description":"option %d"}`, i+1, i+1))
	}
	return "[" + strings.Join(os, ",") + "]"
}

func question(text string, nOptions int, multi bool) string {
	return fmt.Sprintf(`{"question":%q,"header":"Pick","options":%s,"multi_select":%t}`, text, options(nOptions), multi)
}

func TestAnswers(t *testing.T) {
	var asked []pluginsdk.Question
	h := plugintest.New(t, plugintest.Options{Answerer: func(qs []pluginsdk.Question) pluginsdk.Answers {
		asked = qs
		return pluginsdk.Answers{Answers: map[string]string{"Which one?": "opt2", "Which ones?": "opt1, opt3"}}
	}}, definitions()...)
	r := h.MustCall(t, "AskUserQuestion", `{"questions":[`+question("Which one?", 2, false)+","+question("Which ones?", 4, true)+`]}`)
	if r.Kind != pluginsdk.KindOk || r.Message != answeredMessage {
		t.Fatalf("result = %+v", r)
	}
	var got struct{ Answers map[string]string }
	if err := json.Unmarshal([]byte(r.Text()), &got); err != nil || got.Answers["Which ones?"] != "opt1, opt3" || got.Answers["Which one?"] != "opt2" {
		t.Fatalf("answers %q: %v", r.Text(), err)
	}
	if len(asked) != 2 || !asked[1].MultiSelect || asked[1].Options[3].Description != "option 4" || asked[0].Header != "Pick" {
		t.Fatalf("asked %+v", asked)
	}
}

func TestDismissed(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{Answerer: func([]pluginsdk.Question) pluginsdk.Answers {
		return pluginsdk.Answers{Dismissed: true}
	}}, definitions()...)
	r := h.MustCall(t, "AskUserQuestion", `{"questions":[`+question("Which one?", 2, false)+`]}`)
	if r.Kind != pluginsdk.KindOk || r.Text() != `{"answers":{}}` || r.Message != dismissedMessage {
		t.Fatalf("result = %+v", r)
	}
}

// Where no one can answer, the host offers no UserInput: the tool is
// skipped with the reason, not failed.
func TestSkippedWithoutUserInput(t *testing.T) {
	_, loads := plugintest.Load(t, plugintest.Options{}, definitions()...)
	if len(loads) != 1 || loads[0].Status != plugintest.Skipped || !strings.Contains(loads[0].Reason, "no one can answer questions") {
		t.Fatalf("loads = %+v", loads)
	}
}

// One option or five: refused by the schema the host validates with, and
// by the tool itself, naming the question.
func TestBadQuestions(t *testing.T) {
	var schema jsonschema.Schema
	if err := json.Unmarshal(definitions()[0].Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := plugintest.New(t, plugintest.Options{Answerer: func([]pluginsdk.Question) pluginsdk.Answers {
		t.Error("asked the user bad questions")
		return pluginsdk.Answers{}
	}}, definitions()...)
	many := []string{}
	for i := range 5 {
		many = append(many, question(fmt.Sprintf("Q%d?", i), 2, false))
	}
	// Counts out of the schema's bounds never reach the tool: the host (and
	// plugintest) refuse them with the schema's text.
	const refused = "Error validating JSON arguments: "
	tests := []struct {
		name, args, want, brief string
	}{
		{"one option", `{"questions":[` + question("Which?", 1, false) + `]}`,
			refused + `parameter "questions[].options": minItems: array length 1 is less than 2`, "Invalid arguments"},
		{"five options", `{"questions":[` + question("Which?", 5, false) + `]}`,
			refused + `parameter "questions[].options": maxItems: array length 5 is greater than 4`, "Invalid arguments"},
		{"no questions", `{"questions":[]}`, refused + `parameter "questions": minItems: array length 0 is less than 1`, "Invalid arguments"},
		{"five questions", `{"questions":[` + strings.Join(many, ",") + `]}`,
			refused + `parameter "questions": maxItems: array length 5 is greater than 4`, "Invalid arguments"},
		{"same label twice", `{"questions":[{"question":"Q?","header":"h","options":[{"label":"a","description":""},{"label":"a","description":""}]}]}`,
			`questions[0].options[1].label "a" is given twice`, "Invalid questions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			if tt.name != "same label twice" {
				if err := resolved.Validate(args); err == nil {
					t.Errorf("the schema accepts %s", tt.args)
				}
			}
			r := h.MustCall(t, "AskUserQuestion", tt.args)
			if r.Kind != pluginsdk.KindError || !strings.Contains(r.Message, tt.want) || r.Brief != tt.brief {
				t.Fatalf("result = %+v, want an error with %q", r, tt.want)
			}
		})
	}
}
