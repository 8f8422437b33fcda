package repl

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
)

func TestAskQuestions(t *testing.T) {
	single := approval.Question{Question: "Which database?", Header: "Database", Options: []approval.QuestionOption{
		{Label: "Postgres", Description: "relational"}, {Label: "SQLite", Description: "embedded"}}}
	multi := approval.Question{Question: "Which checks?", Options: []approval.QuestionOption{
		{Label: "lint"}, {Label: "test"}, {Label: "bench"}}, MultiSelect: true}
	tests := []struct {
		name      string
		qs        []approval.Question
		input     string
		want      map[string]string
		dismissed bool
		shown     []string
	}{
		{"single", []approval.Question{single}, "2\n", map[string]string{"Which database?": "SQLite"}, false,
			[]string{"? [Database] Which database?", "1) Postgres - relational", "3) Other: type your own answer"}},
		{"multi", []approval.Question{multi}, "1, 3\n", map[string]string{"Which checks?": "lint, bench"}, false,
			[]string{"? [Q1] Which checks?"}},
		{"other", []approval.Question{single}, "3\nMySQL\n", map[string]string{"Which database?": "MySQL"}, false, nil},
		{"own text", []approval.Question{single}, "DuckDB please\n", map[string]string{"Which database?": "DuckDB please"}, false, nil},
		{"asks again", []approval.Question{single}, "7\n1\n", map[string]string{"Which database?": "Postgres"}, false,
			[]string{"please answer a number from 1 to 3"}},
		{"multi asks again", []approval.Question{multi}, "1,x\n2\n", map[string]string{"Which checks?": "test"}, false,
			[]string{"please answer numbers from 1 to 4"}},
		{"two questions", []approval.Question{single, multi}, "1\n2 3\n",
			map[string]string{"Which database?": "Postgres", "Which checks?": "test, bench"}, false, []string{"(1/2)", "(2/2)"}},
		{"dismissed", []approval.Question{single}, "\n", map[string]string{}, true, []string{"(dismissed)"}},
		{"end of input", []approval.Question{single, multi}, "1\n", map[string]string{"Which database?": "Postgres"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a, err := AskQuestions(context.Background(), NewPipeReader(strings.NewReader(tt.input)), &out, tt.qs)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(a.Answers, tt.want) || a.Dismissed != tt.dismissed {
				t.Fatalf("answers = %+v, want %v (dismissed %v)", a, tt.want, tt.dismissed)
			}
			for _, s := range tt.shown {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}
