package plugin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Remote says where a remote tool server listens (Config.Remote): a plugin
// served over TCP by `pluginsdk.Serve --listen` or `kosong-host plugins
// serve`, reached with mutual TLS against a team CA.
//
// The host dials the server's gRPC services itself rather than through
// go-plugin's reattach: reattach takes no multiplexed broker, and go-plugin's
// other broker has the plugin dial back to a listener of the host, which a
// server on another machine must never do. Instead the one connection the
// host opens carries a yamux session (the multiplexer of go-plugin's own
// broker): the host's streams carry the Plugin service, the server's streams
// the host's capability server. A lost connection is a stopped process to
// the supervisor: the next call reconnects (and loads again) with its
// backoff.
type Remote struct {
	// Addr is HOST:PORT.
	Addr string
	// TLS is the host's client config: the team CA, the host's certificate
	// (see pluginrpc.NetworkTLS).
	TLS *tls.Config
}

// processClient is what a Process needs of its go-plugin client; a remote
// connection provides the same.
type processClient interface {
	Exited() bool
	Kill()
}

// remoteLink is a Process's connection to a remote tool server.
type remoteLink struct {
	addr string
	nc   *pluginrpc.NetworkConn
	tail *proc.Tail
	done chan struct{}
}

func (l *remoteLink) Exited() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *remoteLink) Kill() { l.nc.Close() }

// watch records why the connection ended, where Reason and LastWords find it.
func (l *remoteLink) watch() {
	<-l.nc.Done()
	msg := fmt.Sprintf("the connection to %s was lost", l.addr)
	if f := l.nc.Failure(); f != "" {
		msg += ": " + f
	}
	fmt.Fprintln(l.tail, msg)
	close(l.done)
}

// dialRemote connects to cfg.Remote and asks the server to Describe its
// tools: the remote counterpart of Launch.
func dialRemote(ctx context.Context, cfg Config) (*Process, error) {
	r := cfg.Remote
	fail := func(err error, format string, args ...any) error {
		return &Error{Plugin: cfg.Name, Path: r.Addr, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	nc, err := pluginrpc.DialNetwork(dctx, r.Addr, r.TLS, cfg.Logger)
	if err != nil {
		return nil, fail(err, "remote tool server %s: %v", r.Addr, err)
	}
	l := &remoteLink{addr: r.Addr, nc: nc, tail: proc.NewTail(5), done: make(chan struct{})}
	go l.watch()
	p := &Process{Name: cfg.Name, Path: r.Addr, rpc: nc.Client, client: l, cmd: &exec.Cmd{},
		done: l.done, stderr: l.tail}
	desc, err := nc.Client.Describe(dctx)
	if err != nil {
		nc.Close()
		<-l.done
		if f := nc.Failure(); f != "" {
			return nil, fail(err, "remote tool server %s: %s", r.Addr, f)
		}
		return nil, fail(err, "remote tool server %s: describe: %v", r.Addr, err)
	}
	p.Tools = desc.Tools
	return p, nil
}

// remoteLost is the error of a call whose connection to a remote tool
// server was lost, or nil for a local plugin.
func remoteLost(p *Process) error {
	l, ok := p.client.(*remoteLink)
	if !ok {
		return nil
	}
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-l.done:
	case <-t.C:
		return fmt.Errorf("remote plugin %s (%s): the connection failed during the call; the next call reconnects", p.Name, l.addr)
	}
	return errors.New("remote plugin " + p.Name + ": " + l.tail.Last(1) + " during the call; the next call reconnects")
}
