package pluginsdk

// ResultKind says whether a Result is a success, an error or a rejection.
type ResultKind int

// The result kinds.
const (
	KindOk ResultKind = iota
	KindError
	KindRejected
)

// Part is a piece of tool output for the model: text, or an image.
type Part struct {
	Text string
	// An image: MimeType with Data, or URL.
	MimeType string
	Data     []byte
	URL      string
}

// IsImage reports whether the part is an image.
func (p Part) IsImage() bool { return p.MimeType != "" || p.URL != "" }

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Text: s} }

// DisplayBlock is shown to the user, not to the model: a brief, a diff, a
// todo list... Data is any JSON-encodable value; in the results plugintest
// returns it is the JSON received, as a json.RawMessage.
type DisplayBlock struct {
	Kind string
	Data any
}

// Result is what a tool returns: Ok, Error or Rejected, refined with the
// With... methods.
type Result struct {
	Kind    ResultKind
	Output  []Part
	Message string
	Brief   string
	Display []DisplayBlock
	// Feedback is the user's feedback on a rejection.
	Feedback string
	// Runtime marks an error that is a failure to run the tool (a panic,
	// an internal fault) rather than the tool's answer.
	Runtime bool
}

// Ok is a successful result whose output for the model is the given text.
func Ok(output string) Result {
	r := Result{Kind: KindOk}
	if output != "" {
		r.Output = []Part{TextPart(output)}
	}
	return r
}

// OkParts is a successful result with several output parts.
func OkParts(parts ...Part) Result { return Result{Kind: KindOk, Output: parts} }

// Error is a failed result; message explains the failure to the model.
func Error(message string) Result { return Result{Kind: KindError, Message: message} }

// Rejected is the result of a call the user rejected; feedback may be empty.
func Rejected(feedback string) Result { return Result{Kind: KindRejected, Feedback: feedback} }

// WithMessage sets the message for the model.
func (r Result) WithMessage(m string) Result { r.Message = m; return r }

// WithBrief sets the one-line summary shown to the user.
func (r Result) WithBrief(b string) Result { r.Brief = b; return r }

// WithOutput replaces the output with the given text.
func (r Result) WithOutput(s string) Result {
	r.Output = nil
	if s != "" {
		r.Output = []Part{TextPart(s)}
	}
	return r
}

// WithDisplay appends display blocks.
func (r Result) WithDisplay(blocks ...DisplayBlock) Result {
	r.Display = append(r.Display, blocks...)
	return r
}

// Text joins the result's text output.
func (r Result) Text() string {
	s := ""
	for _, p := range r.Output {
		s += p.Text
	}
	return s
}
