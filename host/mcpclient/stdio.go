package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
)

// MaxMessageBytes bounds one MCP message a server sends: a stdio line, an
// HTTP response body or one server-sent event. A stdio line over it is
// skipped (a response among them answers its request with an error), an
// HTTP message over it ends the session; either is logged with the
// server's name. Nothing longer is ever read into memory.
const MaxMessageBytes = limits.MessageBytes

// maxLoggedJunk is how many non-JSON lines of one connection are logged.
const maxLoggedJunk = 10

// terminateWait is how long a stdio server may take to exit once its stdin
// is closed, and again once it got SIGTERM, before it is killed.
const terminateWait = time.Second

// stdioTransport runs a stdio server with pipes of the host's own: its
// stdout goes through a lineFilter (non-JSON lines and lines over
// MaxMessageBytes are skipped), and its stdin counts what was written, so
// that a call whose request the server never read can be sent again.
type stdioTransport struct {
	cmd *exec.Cmd
	srv *Server
	c   *conn // gets the stdin pipe
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	t.cmd.Stdin, t.cmd.Stdout = inR, outW
	if err := t.cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	inR.Close()
	outW.Close()
	in := &stdinPipe{f: inW, cmd: t.cmd, exited: make(chan struct{})}
	in.unread.Store(-1)
	go func() { in.waitErr = t.cmd.Wait(); close(in.exited) }()
	t.c.stdin = in
	out := &lineFilter{r: bufio.NewReaderSize(outR, 64<<10), f: outR, srv: t.srv}
	return (&mcp.IOTransport{Reader: out, Writer: in, MaxLineLength: MaxMessageBytes + 1<<20}).Connect(ctx)
}

// stdinPipe is a stdio server's stdin. Close closes it and waits for the
// server to exit (SIGTERM, then SIGKILL, if it does not), as the MCP spec
// says a client ends a stdio session.
type stdinPipe struct {
	f       *os.File
	cmd     *exec.Cmd
	written atomic.Int64
	// unread is what the server had not read of its stdin when the pipe
	// was closed; -1 until then, or if unknown.
	unread  atomic.Int64
	exited  chan struct{}
	waitErr error // set before exited is closed

	once     sync.Once
	closeErr error
}

func (p *stdinPipe) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	p.written.Add(int64(n))
	return n, err
}

func (p *stdinPipe) Close() error {
	p.once.Do(func() {
		p.unread.Store(unreadBytes(p.f))
		_ = p.f.Close()
		p.closeErr = p.awaitExit()
	})
	return p.closeErr
}

func (p *stdinPipe) awaitExit() error {
	wait := func() bool {
		t := time.NewTimer(terminateWait)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	if wait() {
		return p.waitErr
	}
	if p.cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
		return p.waitErr
	}
	_ = p.cmd.Process.Kill()
	if wait() {
		return p.waitErr
	}
	return errors.New("the server does not exit")
}

// neverRead reports whether the server read nothing of its stdin from
// offset start on: what was written there is still in the pipe (or was
// never written). It is false when that cannot be known.
func (p *stdinPipe) neverRead(start int64) bool {
	if start < 0 {
		return true
	}
	written := p.written.Load()
	unread := p.unread.Load()
	if unread < 0 {
		// The server closed its stdout: it is on its way out. Once it
		// is gone, what it left unread stays unread.
		t := time.NewTimer(closeGrace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			// Still running: it may yet read it.
			return false
		}
		if unread = unreadBytes(p.f); unread < 0 {
			unread = p.unread.Load()
		}
	}
	return unread >= 0 && start >= written-unread
}

// lineFilter passes a stdio server's stdout on one JSON message a line:
// a line that is not a JSON object or array (a stray print, a log line) is
// logged and skipped, and a line over MaxMessageBytes is skipped without
// being held in memory (when it is the response to a request, an error
// response takes its place, so the call fails at once).
type lineFilter struct {
	r    *bufio.Reader
	f    io.Closer
	srv  *Server
	buf  []byte // the rest of the line being passed on
	err  error
	junk int // non-JSON lines seen
}

func (l *lineFilter) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.buf, l.err = l.next()
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

func (l *lineFilter) Close() error { return l.f.Close() }

// next returns the next line to pass on (with its newline), or nil for a
// line skipped.
func (l *lineFilter) next() ([]byte, error) {
	var line []byte
	var head []byte // the start of a line over the limit
	over := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case over:
		case len(line)+len(chunk) > MaxMessageBytes+1:
			over = true
			head = append(line, chunk...)
			if len(head) > 512 {
				head = head[:512]
			}
			head = bytes.Clone(head)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if over || len(bytes.TrimSpace(line)) == 0 {
				return nil, err
			}
			// A last line without its newline.
			return l.check(line), err
		}
		break
	}
	if over {
		return l.refuse(head), nil
	}
	return l.check(line), nil
}

// check returns line if it holds one JSON object or array, else logs it
// and returns nil.
func (l *lineFilter) check(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	if (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		return append(trimmed, '\n')
	}
	l.junk++
	if l.junk <= maxLoggedJunk {
		shown := trimmed
		if len(shown) > 200 {
			shown = shown[:200]
		}
		l.srv.logger.Warn("MCP server printed a line that is not JSON on stdout; skipped", "server", l.srv.cfg.Name, "line", string(shown))
		if l.junk == maxLoggedJunk {
			l.srv.logger.Warn("MCP server printed more lines that are not JSON; they are skipped without being logged", "server", l.srv.cfg.Name)
		}
	}
	return nil
}

// refuse logs a message over MaxMessageBytes, and returns an error
// response in its place when its start names the request it answers.
func (l *lineFilter) refuse(head []byte) []byte {
	msg := fmt.Sprintf("MCP server %s sent a message over the limit of %d bytes (mcpclient.MaxMessageBytes); it was skipped", l.srv.cfg.Name, MaxMessageBytes)
	l.srv.logger.Warn(msg, "server", l.srv.cfg.Name)
	id, ok := responseID(head)
	if !ok {
		return nil
	}
	resp, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32603, "message": msg}})
	if err != nil {
		return nil
	}
	return append(resp, '\n')
}

// responseID finds the id of a response from the start of its line, when
// "id" comes before any nested value (as the go-sdk and most servers
// write it).
func responseID(head []byte) (json.RawMessage, bool) {
	head = bytes.TrimSpace(head)
	if len(head) == 0 || head[0] != '{' {
		return nil, false
	}
	i := bytes.Index(head, []byte(`"id":`))
	if i < 0 || bytes.ContainsAny(head[1:i], "{[") {
		return nil, false
	}
	rest := bytes.TrimLeft(head[i+len(`"id":`):], " ")
	dec := json.NewDecoder(bytes.NewReader(rest))
	var id json.RawMessage
	if dec.Decode(&id) != nil || len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		return nil, false
	}
	return id, true
}
