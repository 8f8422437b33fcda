package pluginsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"text/template"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// SkipThisTool, returned (or wrapped) by a constructor, leaves the tool out
// of the toolset without an error. Use Skip to give a reason.
var SkipThisTool = errors.New("skip this tool")

type skipError struct{ reason string }

func (e *skipError) Error() string        { return e.reason }
func (e *skipError) Is(target error) bool { return target == SkipThisTool }

// Skip returns an error that makes the tool skipped, with a reason the host
// shows to the user (e.g. "no search service configured").
func Skip(reason string) error { return &skipError{reason: reason} }

func skipReason(err error) string {
	var se *skipError
	if errors.As(err, &se) {
		return se.reason
	}
	return strings.TrimSuffix(strings.TrimSuffix(err.Error(), SkipThisTool.Error()), ": ")
}

// Handler is a typed tool: its arguments decode into P.
type Handler[P any] interface {
	Call(ctx context.Context, params P) Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc[P any] func(ctx context.Context, params P) Result

// Call calls f.
func (f HandlerFunc[P]) Call(ctx context.Context, params P) Result { return f(ctx, params) }

// RawHandler is an untyped tool: it receives the arguments as JSON, already
// validated by the host against the tool's schema, with the schema's
// defaults filled in for absent properties.
type RawHandler interface {
	Call(ctx context.Context, args json.RawMessage) Result
}

// RawHandlerFunc adapts a function to RawHandler.
type RawHandlerFunc func(ctx context.Context, args json.RawMessage) Result

// Call calls f.
func (f RawHandlerFunc) Call(ctx context.Context, args json.RawMessage) Result { return f(ctx, args) }

type callFunc func(ctx context.Context, args json.RawMessage) Result

// Definition declares one tool of a plugin binary; build it with NewTool or
// NewRawTool and pass it to Serve.
type Definition struct {
	name        string
	description string
	schema      json.RawMessage
	timeout     time.Duration
	ruleArg     string
	annotations Annotations
	// processState: the tool keeps state in the process that sessions
	// must not share (KeepsProcessState).
	processState bool
	ctor         reflect.Value
	capTypes     []reflect.Type
	bind         func(v reflect.Value) callFunc
	err          error
}

// Name is the tool's name.
func (d Definition) Name() string { return d.name }

// Schema is the JSON Schema of the tool's parameters.
func (d Definition) Schema() json.RawMessage { return d.schema }

// Description is the description the model sees.
func (d Definition) Description() string { return d.description }

// Capabilities are the host capabilities the constructor asks for, by wire
// name.
func (d Definition) Capabilities() []string {
	names := []string{}
	for _, t := range d.capTypes {
		if name := capTypes[t]; name != localLogger {
			names = append(names, name)
		}
	}
	return names
}

// Err is what is wrong with the declaration (the constructor's shape, the
// parameters type, the description template...), found when the tool is
// declared; nil when nothing is. Serve and plugintest.New refuse a
// declaration with an error.
func (d Definition) Err() error { return d.err }

// Option refines a Definition.
type Option func(*Definition)

// KeepsProcessState declares that the tool keeps state in its process
// (package variables, a cache, a child process) that one session must not
// see of another's. A host serving several sessions then starts this
// binary once per session; without it, one process of the binary may
// serve several sessions, each with its own Load: the tools a
// constructor returns, the Session and capabilities it was given, are the
// session's own.
func KeepsProcessState() Option { return func(def *Definition) { def.processState = true } }

// WithTimeout sets the tool's default call timeout, which the host applies
// unless agent.yaml overrides it.
func WithTimeout(d time.Duration) Option { return func(def *Definition) { def.timeout = d } }

// WithRuleArgument names the argument the host's permission rules match for
// this tool: with "command", the rule Shell(git status*) matches calls whose
// command argument matches "git status*". Without it, rules name the tool
// only.
func WithRuleArgument(name string) Option { return func(def *Definition) { def.ruleArg = name } }

// RuleArgument is the argument permission rules match ("" for none).
func (d Definition) RuleArgument() string { return d.ruleArg }

// WithDescriptionFile renders the description from a Markdown template in
// fsys (usually an embed.FS) with data, replacing the description given.
func WithDescriptionFile(fsys fs.FS, name string, data any) Option {
	return func(def *Definition) {
		desc, err := LoadDescription(fsys, name, data)
		if err != nil {
			def.err = errors.Join(def.err, err)
			return
		}
		def.description = desc
	}
}

// LoadDescription renders the text/template file name in fsys with data.
func LoadDescription(fsys fs.FS, name string, data any) (string, error) {
	if fsys == nil {
		return "", fmt.Errorf("description %s: no file system given", name)
	}
	src, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", fmt.Errorf("description %s: %w", name, err)
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return "", fmt.Errorf("description %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("description %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// NewTool declares a typed tool. P is the parameters struct: its JSON Schema
// is generated from the struct (json tags name the properties, the jsonschema
// tag is the description, and default, enum, minimum and the other keyword
// tags of the package documentation add keywords) and the arguments decode
// into it with defaults applied, in nested objects too; a tag that cannot be
// read is a declaration error. constructor is a function whose parameters are
// capability interfaces, any of the nine the host offers (Approval,
// Environment, Session, Config, Progress, UserInput, Model; Editor and
// Terminal, nil where the host lends no editor), or an
// hclog.Logger, and which returns a Handler[P], optionally with an error
// (SkipThisTool, or Skip, to leave the tool out). A constructor of another
// shape makes the Definition's Err say so, with the shape expected.
//
// The handler's ctx ends when the call is cancelled or times out. A
// handler must return soon after: one still running past the grace period
// (5 seconds, or KOSONG_PLUGIN_CANCEL_GRACE as the host sets it) takes its
// plugin process down, and with it every call in flight; the host restarts
// the plugin for the next call.
func NewTool[P any](name, description string, constructor any, opts ...Option) Definition {
	d := Definition{name: name, description: description}
	schema, err := schemaFor[P]()
	if err != nil {
		d.err = fmt.Errorf("tool %s: %w", name, err)
	}
	d.schema = schema.raw
	handlerType := reflect.TypeFor[Handler[P]]()
	d.bind = func(v reflect.Value) callFunc {
		h := v.Interface().(Handler[P])
		return func(ctx context.Context, args json.RawMessage) Result {
			var p P
			if err := schema.decode(args, &p); err != nil {
				return Error(fmt.Sprintf("Error parsing JSON arguments: %v", err)).WithBrief("Invalid arguments")
			}
			return h.Call(ctx, p)
		}
	}
	d.setConstructor(constructor, handlerType)
	for _, o := range opts {
		o(&d)
	}
	return d
}

// NewRawTool declares an untyped tool whose JSON Schema is given by hand, for
// tools whose parameters are only known at run time. constructor is as for
// NewTool but returns a RawHandler.
func NewRawTool(name, description string, schema json.RawMessage, constructor any, opts ...Option) Definition {
	d := Definition{name: name, description: description, schema: schema}
	if !json.Valid(schema) {
		d.err = fmt.Errorf("tool %s: schema is not valid JSON", name)
	}
	d.bind = func(v reflect.Value) callFunc {
		return v.Interface().(RawHandler).Call
	}
	d.setConstructor(constructor, reflect.TypeFor[RawHandler]())
	for _, o := range opts {
		o(&d)
	}
	return d
}

// localLogger keys the logger among the values a constructor may take; it
// is no capability on the wire.
const localLogger = "hclog.Logger"

var (
	errorType = reflect.TypeFor[error]()
	capTypes  = map[reflect.Type]string{
		reflect.TypeFor[Approval]():     pluginrpc.CapApproval,
		reflect.TypeFor[Environment]():  pluginrpc.CapEnvironment,
		reflect.TypeFor[Session]():      pluginrpc.CapSession,
		reflect.TypeFor[Config]():       pluginrpc.CapConfig,
		reflect.TypeFor[Progress]():     pluginrpc.CapProgress,
		reflect.TypeFor[UserInput]():    pluginrpc.CapUserInput,
		reflect.TypeFor[Model]():        pluginrpc.CapModel,
		reflect.TypeFor[Editor]():       pluginrpc.CapEditor,
		reflect.TypeFor[Terminal]():     pluginrpc.CapTerminal,
		reflect.TypeFor[hclog.Logger](): localLogger,
	}
)

// paramTypes lists what a constructor may take, for error messages.
const paramTypes = "pluginsdk.Approval, pluginsdk.Environment, pluginsdk.Session, pluginsdk.Config, pluginsdk.Progress, pluginsdk.UserInput, pluginsdk.Model, pluginsdk.Editor, pluginsdk.Terminal, hclog.Logger"

// skipWithout are the capabilities a host may rightly not offer: a tool
// whose constructor asks for one of them is then skipped, with the reason,
// rather than failed.
var skipWithout = map[string]string{
	pluginrpc.CapUserInput: "no one can answer questions in this session (the host offers no UserInput)",
	pluginrpc.CapModel:     "the host does not say which model the session runs (it offers no Model)",
}

func (d *Definition) setConstructor(constructor any, handlerType reflect.Type) {
	want := fmt.Sprintf("want func(...) (H, error) or func(...) H, where H implements %s and each parameter is one of %s",
		handlerType, paramTypes)
	fail := func(format string, args ...any) {
		d.err = errors.Join(d.err, fmt.Errorf("tool %s: constructor "+format+"; "+want, append([]any{d.name}, args...)...))
	}
	v := reflect.ValueOf(constructor)
	if !v.IsValid() || v.Kind() != reflect.Func {
		fail("must be a function, got %T", constructor)
		return
	}
	t := v.Type()
	if t.IsVariadic() {
		fail("must not be variadic, got %s", t)
		return
	}
	for i := range t.NumIn() {
		if _, ok := capTypes[t.In(i)]; !ok {
			fail("parameter %d is %s, which the host cannot provide", i+1, t.In(i))
			return
		}
		d.capTypes = append(d.capTypes, t.In(i))
	}
	switch {
	case t.NumOut() == 1, t.NumOut() == 2 && t.Out(1) == errorType:
	default:
		fail("must return (handler) or (handler, error), got %s", t)
		return
	}
	if !t.Out(0).Implements(handlerType) {
		fail("returns %s, which does not implement %s", t.Out(0), handlerType)
		return
	}
	d.ctor = v
}

// construct calls the constructor with the capabilities by type.
func (d *Definition) construct(caps map[string]any) (fn callFunc, err error) {
	args := make([]reflect.Value, len(d.capTypes))
	for i, t := range d.capTypes {
		c, ok := caps[capTypes[t]]
		if !ok && (capTypes[t] == pluginrpc.CapEditor || capTypes[t] == pluginrpc.CapTerminal) {
			// Optional: without an editor, a tool works on the disk and
			// runs commands itself.
			args[i] = reflect.Zero(t)
			continue
		}
		if !ok {
			if reason, skip := skipWithout[capTypes[t]]; skip {
				return nil, Skip(reason)
			}
			return nil, fmt.Errorf("Tool dependency not found: %s", t)
		}
		args[i] = reflect.ValueOf(c)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("constructor panicked: %v", r)
		}
	}()
	out := d.ctor.Call(args)
	if len(out) == 2 && !out[1].IsNil() {
		return nil, out[1].Interface().(error)
	}
	h := out[0]
	if (h.Kind() == reflect.Pointer || h.Kind() == reflect.Interface) && h.IsNil() {
		return nil, errors.New("constructor returned a nil handler")
	}
	return d.bind(h), nil
}

func isSkip(err error) bool { return errors.Is(err, SkipThisTool) }
