// Package audit keeps a session's audit log: audit.jsonl in the session's
// folder, append-only JSON lines, one "call" record per tool call written
// when the model's call is handed to its tool (before it runs), one
// "decision" record per permission decision or approval of the call
// (approved or denied, and how: once, session, rule, yolo, hook,
// unattended), and one "result" record once its result is in. A call cut
// short by a crash keeps its call record; Read reports it as having no
// result.
//
// The log hears of calls as a loop.Observer (the session's events), so it
// sees what the front end sees, in the same order.
package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// FileName is the audit log's name in a session's folder.
const FileName = "audit.jsonl"

// ArgsEnv opts in to recording the arguments themselves (else only their
// SHA-256).
const ArgsEnv = "KOSONG_AUDIT_ARGUMENTS"

// Record is one line of the log.
type Record struct {
	Time time.Time `json:"time"`
	// Type is "call", "decision" or "result".
	Type    string `json:"type"`
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Subagent names the subagent whose call it is ("" for the agent's).
	Subagent string `json:"subagent,omitempty"`
	CallID   string `json:"call_id"`
	Tool     string `json:"tool,omitempty"`
	// Source is where the tool comes from ("plugin shell", "mcp test").
	Source string `json:"source,omitempty"`
	// Plugin is the plugin that runs the tool and Pin which binary it is:
	// "sha256:HEX" (the lock file's or agent file's pin, else the file's
	// own hash, "unpinned sha256:HEX"), or "builtin VERSION" for a
	// built-in plugin (the host binary's version).
	Plugin string `json:"plugin,omitempty"`
	Pin    string `json:"pin,omitempty"`
	// ArgsSHA256 is the hash of the arguments as the model sent them;
	// Args are they, only with the opt-in.
	ArgsSHA256 string          `json:"args_sha256,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	// The decision.
	Approved *bool  `json:"approved,omitempty"`
	How      string `json:"how,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Approver string `json:"approver,omitempty"`
	Action   string `json:"action,omitempty"`
	// The result: ok, error, rejected, cancelled or crashed (the plugin
	// process stopped during the call; Error says how).
	Status     string  `json:"status,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Pinned is a tool that says which plugin binary runs it (host/plugin's
// tools do).
type Pinned interface {
	PluginPin() (plugin, pin string)
}

// Log appends to a session's audit log.
type Log struct {
	session, agent string
	args           bool
	find           func(name string) (toolset.Tool, bool)

	// also gets a copy of every record (a server's log of all its
	// sessions); nil: none.
	also *Log

	mu  sync.Mutex
	f   *os.File
	err error
}

// Options say what a Log records.
type Options struct {
	Session, Agent string
	// Args records the arguments themselves.
	Args bool
	// Find names a tool's source; nil: none is recorded.
	Find func(name string) (toolset.Tool, bool)
	// Also gets a copy of every record, the session's id in it (the
	// server's log of all its sessions); nil: none.
	Also *Log
}

// Open opens (creating it) the audit log of the session in dir, for
// appending.
func Open(dir string, opts Options) (*Log, error) {
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &Log{session: opts.Session, agent: opts.Agent, args: opts.Args, find: opts.Find, f: f, also: opts.Also}, nil
}

// Switch moves the log to the session id whose folder is dir (a new
// session of the same conversation, /clear): later records go to its
// audit log.
func (l *Log) Switch(dir, session string) error {
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		f.Close()
		return nil
	}
	old := l.f
	l.f, l.session = f, session
	return old.Close()
}

// Close closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Err is the first write that failed (nil: none).
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// write appends r as one line, in one write (O_APPEND keeps lines whole).
func (l *Log) write(r Record) {
	r.Time = time.Now().UTC()
	l.mu.Lock()
	if r.Session == "" {
		r.Session = l.session
	}
	b, err := json.Marshal(r)
	if err == nil && l.f != nil {
		if _, err := l.f.Write(append(b, '\n')); err != nil && l.err == nil {
			l.err = err
		}
	}
	l.mu.Unlock()
	if err == nil && l.also != nil {
		l.also.writeLine(append(b, '\n'))
	}
}

// writeLine appends a record already encoded.
func (l *Log) writeLine(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if _, err := l.f.Write(b); err != nil && l.err == nil {
		l.err = err
	}
}

// Observe records what e says of a tool call.
func (l *Log) Observe(e loop.Event) { l.observe(e, "") }

func (l *Log) observe(e loop.Event, subagent string) {
	switch e := e.(type) {
	case loop.SubagentEvent:
		l.observe(e.Event, e.SubagentType)
	case loop.ToolCallStarted:
		if e.Duplicate {
			return
		}
		sum := sha256.Sum256([]byte(e.Call.Arguments))
		r := Record{Type: "call", Agent: l.agent, Subagent: subagent, CallID: e.Call.ID, Tool: e.Call.Name,
			ArgsSHA256: hex.EncodeToString(sum[:])}
		if l.find != nil {
			if t, ok := l.find(e.Call.Name); ok {
				r.Source = t.Spec().Source
				if p, ok := t.(Pinned); ok {
					r.Plugin, r.Pin = p.PluginPin()
				}
			}
		}
		if l.args {
			if json.Valid([]byte(e.Call.Arguments)) {
				r.Args = json.RawMessage(e.Call.Arguments)
			} else {
				r.Args, _ = json.Marshal(e.Call.Arguments)
			}
		}
		l.write(r)
	case loop.PermissionDecided:
		switch e.Decision {
		case "allow", "deny":
			approved := e.Decision == "allow"
			rule := e.Rule
			if e.Where != "" {
				rule += " (" + e.Where + ")"
			}
			l.write(Record{Type: "decision", Subagent: subagent, CallID: e.ToolCallID, Tool: e.ToolName, Approved: &approved,
				How: "rule", Rule: rule})
		}
	case loop.ApprovalDecided:
		approved := e.Approved
		r := Record{Type: "decision", Subagent: subagent, CallID: e.ToolCallID, Tool: e.ToolName, Approved: &approved,
			Action: e.Action}
		switch e.Answer {
		case approval.AnswerUser:
			r.How, r.Approver = "once", "user"
			if e.ForSession {
				r.How = "session"
			}
		case approval.AnswerSession:
			r.How, r.Approver = "session", "user"
		default: // yolo, unattended, rule
			r.How = e.Answer
		}
		l.write(r)
	case loop.ToolCallFinished:
		status := "ok"
		switch {
		case e.Result.Crashed:
			status = "crashed"
		case e.Cancelled:
			status = "cancelled"
		case e.Result.Kind == toolset.Rejected:
			status = "rejected"
		case e.Result.Kind != toolset.Ok:
			status = "error"
		}
		r := Record{Type: "result", Subagent: subagent, CallID: e.Call.ID, Tool: e.Call.Name, Status: status,
			DurationMS: float64(e.Duration.Microseconds()) / 1000}
		if e.Result.Crashed {
			r.Error = e.Result.Message
		}
		if e.Result.Brief == "Hook blocked" {
			f := false
			r.Approved, r.How = &f, "hook"
		}
		l.write(r)
	}
}

// Call is one tool call as the log tells it.
type Call struct {
	Start time.Time
	// Session is the call's session (a server's log holds several).
	Session    string
	CallID     string
	Tool       string
	Source     string
	Plugin     string
	Pin        string
	Subagent   string
	ArgsSHA256 string
	Args       json.RawMessage
	// Decisions are the call's permission decisions and approvals.
	Decisions []Record
	// Status is the result's; "" when the log has no result (the host
	// stopped while the call ran).
	Status   string
	Duration time.Duration
	// Error says how a crashed call ended.
	Error string
}

// Read reads a session's audit log (the file in dir) into its calls, in
// the order they started. A line that is not a record (a write cut off
// by a crash) is skipped.
func Read(dir string) ([]Call, error) {
	f, err := os.Open(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	return parse(f)
}

func parse(rd io.Reader) ([]Call, error) {
	var calls []*Call
	byID := map[string]*Call{}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.CallID == "" {
			continue
		}
		key := r.Session + "\x00" + r.Subagent + "\x00" + r.CallID
		c := byID[key]
		if r.Type == "call" || c == nil {
			c = &Call{Start: r.Time, Session: r.Session, CallID: r.CallID, Tool: r.Tool, Subagent: r.Subagent}
			byID[key] = c
			calls = append(calls, c)
		}
		switch r.Type {
		case "call":
			c.Source, c.ArgsSHA256, c.Args, c.Plugin, c.Pin = r.Source, r.ArgsSHA256, r.Args, r.Plugin, r.Pin
		case "decision":
			c.Decisions = append(c.Decisions, r)
		case "result":
			c.Status, c.Error = r.Status, r.Error
			c.Duration = time.Duration(r.DurationMS * float64(time.Millisecond))
			if r.How != "" {
				c.Decisions = append(c.Decisions, r)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		out[i] = *c
	}
	return out, nil
}

// Decision sums up a call's decisions: "approved (how)" or "denied
// (how)" for the last, "-" for none.
func (c Call) Decision() string {
	if len(c.Decisions) == 0 {
		return "-"
	}
	d := c.Decisions[len(c.Decisions)-1]
	word := "denied"
	if d.Approved != nil && *d.Approved {
		word = "approved"
	}
	s := word + " (" + d.How
	if d.Rule != "" {
		s += ": " + d.Rule
	}
	if d.Approver != "" {
		s += ", by " + d.Approver
	}
	return s + ")"
}
