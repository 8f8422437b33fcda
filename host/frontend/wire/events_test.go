package wire

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// everyEvent is one value of each loop event type; TestEveryEventHasAWireShape
// fails when host/loop declares an event missing here.
var everyEvent = []loop.Event{
	loop.StepStarted{}, loop.TextDelta{}, loop.ReasoningDelta{}, loop.ToolCallStarted{}, loop.ToolCallFinished{},
	loop.UsageReported{}, loop.StepRetried{}, loop.StepInterrupted{}, loop.ResponseStopped{}, loop.ApprovalDecided{},
	loop.ToolProgress{}, loop.TurnFailed{}, loop.TurnEnded{}, loop.HookRan{}, loop.PermissionDecided{},
	loop.AgentReloaded{}, loop.Compacted{}, loop.Steered{}, loop.CompactionStarted{}, loop.SubagentEvent{},
	loop.PlanModeChanged{}, loop.ToolCallPart{}, loop.LimitReached{},
}

// loopEventTypes are the names of the types in host/loop (tests aside)
// with the event() method that makes them loop.Event.
func loopEventTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "loop", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources of host/loop: %v", err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "event" || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				names = append(names, id.Name)
			}
		}
	}
	return names
}

// sentinel is the value of every duration of the filled events: 1234 ms
// and a few nanoseconds, so a duration sent in nanoseconds or seconds
// shows.
const sentinel = 1234*time.Millisecond + 567891

var durationType = reflect.TypeOf(time.Duration(0))
var errorType_ = reflect.TypeOf((*error)(nil)).Elem()
var rawType = reflect.TypeOf(json.RawMessage(nil))

// fill sets every field of v, recursively: strings, numbers, flags, one
// element in each slice, an error in each error, sentinel in each duration.
func fill(v reflect.Value) {
	switch {
	case v.Type() == durationType:
		v.SetInt(int64(sentinel))
		return
	case v.Type() == rawType:
		v.SetBytes([]byte(`{"k":1}`))
		return
	case v.Type() == reflect.TypeOf((*loop.Event)(nil)).Elem():
		// A wrapped event: one with a duration.
		e := reflect.New(reflect.TypeOf(loop.HookRan{})).Elem()
		fill(e)
		v.Set(e)
		return
	case v.Type() == errorType_:
		v.Set(reflect.ValueOf(errors.New("boom")))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem())
		v.Set(p)
	}
}

// durations counts the durations in v's fields, recursively.
func durations(t reflect.Type) int {
	if t == durationType {
		return 1
	}
	n := 0
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				n += durations(t.Field(i).Type)
			}
		}
	}
	return n
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkPayload walks a payload's JSON: every key is snake_case, a key
// ending in _ms holds the sentinel in milliseconds, a key ending in _s
// is Kimi's wait_s, and no number is the sentinel in nanoseconds.
func checkPayload(errorf func(string, ...any), where string, v any, ms *int) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !snake.MatchString(k) {
				errorf("%s: key %q is not snake_case", where, k)
			}
			if strings.HasSuffix(k, "_s") && k != "wait_s" {
				errorf("%s: key %q is a duration in seconds; durations are in ms", where, k)
			}
			if strings.HasSuffix(k, "_ms") {
				if f, ok := x.(float64); !ok || f != float64(sentinel.Milliseconds()) {
					errorf("%s: %s = %v, want %d (ms)", where, k, x, sentinel.Milliseconds())
				}
				*ms++
			}
			checkPayload(errorf, where+"."+k, x, ms)
		}
	case []any:
		for _, x := range v {
			checkPayload(errorf, where+"[]", x, ms)
		}
	case float64:
		if v == float64(sentinel) {
			errorf("%s: a duration in nanoseconds (%v)", where, v)
		}
	}
}

func TestEveryEventHasAWireShape(t *testing.T) {
	covered := map[string]bool{}
	for _, e := range everyEvent {
		covered[reflect.TypeOf(e).Name()] = true
	}
	names := loopEventTypes(t)
	if len(names) < len(everyEvent) {
		t.Fatalf("found %d loop event types (%v), fewer than the %d listed here", len(names), names, len(everyEvent))
	}
	for _, n := range names {
		if !covered[n] {
			t.Errorf("loop event %s is not in everyEvent: give it a wire shape in wireEvent and list it", n)
		}
	}
	for _, e := range everyEvent {
		name := reflect.TypeOf(e).Name()
		t.Run(name, func(t *testing.T) {
			v := reflect.New(reflect.TypeOf(e)).Elem()
			fill(v)
			typ, payload := wireEvent(v.Interface().(loop.Event))
			if typ == "" {
				t.Fatalf("%s has no wire shape", name)
			}
			if !regexp.MustCompile(`^[A-Z][A-Za-z]+$`).MatchString(typ) {
				t.Errorf("type %q", typ)
			}
			b, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			var back any
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			ms := 0
			checkPayload(t.Errorf, typ, back, &ms)
			if want := durations(reflect.TypeOf(e)); ms < want {
				t.Errorf("%s: %d keys in ms for %d durations: %s", typ, ms, want, b)
			}
			t.Logf("%s %s", typ, b)
		})
	}
}

// The checks above fail on what they are meant to catch.
func TestCheckPayloadCatches(t *testing.T) {
	tests := []struct {
		name    string
		payload string
	}{
		{"go field name", `{"Step":1}`},
		{"nanoseconds", `{"duration":1234567891}`},
		{"seconds", `{"delay_s":1.2}`},
		{"ms wrong", `{"duration_ms":1234567891}`},
		{"nested", `{"calls":[{"ID":"c"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.payload), &v); err != nil {
				t.Fatal(err)
			}
			failed := false
			ms := 0
			checkPayload(func(string, ...any) { failed = true }, "p", v, &ms)
			if !failed {
				t.Errorf("%s passed the check", tt.payload)
			}
		})
	}
}

func TestErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("x"), "Error"},
		{providers.NewError("p", providers.ErrRateLimit, 429, "", nil), "APIStatusError"},
		{providers.NewError("p", providers.ErrServer, 503, "", nil), "APIStatusError"},
		{providers.NewError("p", providers.ErrConnection, 0, "", nil), "APIConnectionError"},
		{providers.NewError("p", providers.ErrTimeout, 0, "", nil), "APITimeoutError"},
		{providers.NewError("p", providers.ErrEmptyResponse, 0, "", nil), "APIEmptyResponseError"},
		{providers.NewError("p", providers.ErrUnknown, 0, "", nil), "Error"},
	}
	for _, tt := range tests {
		if got := errorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
