package approval

import "context"

// QuestionOption is one answer the user may pick.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Question is one question of a tool's call (AskUserQuestion).
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multi_select"`
}

// QuestionRequest is a running call's questions for the user.
type QuestionRequest struct {
	ToolCallID string
	ToolName   string
	Questions  []Question
}

// Answers are the user's answers by question text: a label, the labels of
// a multi-select question joined with ", ", or the user's own text.
// Dismissed says the user closed the questions without answering.
type Answers struct {
	Answers   map[string]string
	Dismissed bool
}

// UserInput is what a front end implements to answer a tool's questions:
// the terminal's picker (host/repl), a wire or ACP client. It may block
// until the user answers; it must return when ctx is done. A front end
// where no one can answer (-p, unattended) gives none, and the host then
// does not offer the UserInput capability.
type UserInput interface {
	Ask(ctx context.Context, req QuestionRequest) (Answers, error)
}

// UserInputFunc adapts a function to UserInput.
type UserInputFunc func(ctx context.Context, req QuestionRequest) (Answers, error)

// Ask calls f.
func (f UserInputFunc) Ask(ctx context.Context, req QuestionRequest) (Answers, error) {
	return f(ctx, req)
}
