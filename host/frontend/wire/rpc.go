package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// JSON-RPC error codes, as Kimi CLI's wire uses them.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeBusy           = -32000
	codeProvider       = -32003
	codeAuth           = -32004
)

// MaxLine is the longest message line read (100 MiB).
const MaxLine = 100 << 20

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// message is any JSON-RPC 2.0 message as read.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type outResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// errClosed: the connection ended before the answer came.
var errClosed = errors.New("wire connection closed")

// peer is one end of the line-delimited JSON-RPC connection: it writes one
// message a line and matches the client's answers to the requests sent.
type peer struct {
	out io.Writer
	wmu sync.Mutex

	mu      sync.Mutex
	pending map[string]chan message
	closed  bool
	seq     int
}

func newPeer(out io.Writer) *peer {
	return &peer{out: out, pending: map[string]chan message{}}
}

func (p *peer) write(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, _ = p.out.Write(buf.Bytes())
}

func (p *peer) notify(method string, params any) {
	p.write(outRequest{JSONRPC: "2.0", Method: method, Params: params})
}

func (p *peer) respond(id json.RawMessage, result any, err *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if err == nil && result == nil {
		result = struct{}{}
	}
	p.write(outResponse{JSONRPC: "2.0", ID: id, Result: result, Error: err})
}

// nextID returns a fresh request id with the prefix.
func (p *peer) nextID(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	return prefix + "-" + strconv.Itoa(p.seq)
}

// call sends a request with id and waits for the answer, the end of ctx or
// of the connection.
func (p *peer) call(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	ch := make(chan message, 1)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	if _, dup := p.pending[id]; dup {
		p.mu.Unlock()
		return nil, fmt.Errorf("a request with id %q is already waiting for its answer", id)
	}
	p.pending[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}()
	p.write(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, errClosed
		}
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands an answer to the request waiting for it; false if none
// waits (an unknown or late id).
func (p *peer) deliver(m message) bool {
	var id string
	if err := json.Unmarshal(m.ID, &id); err != nil {
		id = string(m.ID)
	}
	p.mu.Lock()
	ch, ok := p.pending[id]
	if ok {
		delete(p.pending, id)
	}
	p.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}

// close fails every waiting request with errClosed.
func (p *peer) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for id, ch := range p.pending {
		close(ch)
		delete(p.pending, id)
	}
}

func (p *peer) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// readLines calls fn with each line of r (up to MaxLine bytes) until EOF.
func readLines(r io.Reader, fn func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			fn(line)
		}
	}
	return sc.Err()
}
