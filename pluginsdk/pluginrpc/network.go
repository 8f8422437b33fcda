package pluginrpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// A plugin served over the network (a remote tool server) speaks the same
// gRPC services as a launched one, over one TCP connection that the host
// opens:
//
//   - TLS 1.3 with mutual authentication against a team CA, ALPN NetworkALPN;
//   - inside it, a yamux session (the multiplexer go-plugin's broker uses);
//   - streams the host opens carry the Plugin service (and gRPC health);
//   - streams the plugin opens carry the host's capability server, so the
//     plugin never dials the host: capabilities travel on the connection
//     the host opened.
//
// Each connection is one host: it gets its own Server (from NewServer), its
// own Load, session facts and capabilities. Many hosts are served at once.

// NetworkALPN is the ALPN protocol name of a remote tool server.
const NetworkALPN = "kosong-plugin-v1"

// The environment variables a plugin binary reads to serve over the network
// (the --listen, --ca, --cert and --key flags win over them).
const (
	ListenEnv = "KOSONG_PLUGIN_LISTEN"
	CAEnv     = "KOSONG_PLUGIN_CA"
	CertEnv   = "KOSONG_PLUGIN_CERT"
	KeyEnv    = "KOSONG_PLUGIN_KEY"
)

// handshakeTimeout bounds a connection's TLS handshake, both sides.
const handshakeTimeout = 10 * time.Second

// NetworkTLS builds the TLS config of one end of a remote tool server
// connection from PEM files: the team CA that must have signed the peer's
// certificate, and this end's certificate and key. TLS 1.3 only; the server
// requires and verifies a client certificate. serverName is what the host
// checks the server's certificate for ("" on the server, and on the host the
// host part of the address).
func NetworkTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	var missing []string
	for _, f := range [][2]string{{"ca", caFile}, {"cert", certFile}, {"key", keyFile}} {
		if f[1] == "" {
			missing = append(missing, f[0])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("TLS: %s not given (mutual TLS needs a CA, a certificate and a key)", strings.Join(missing, ", "))
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("TLS: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("TLS: CA %s holds no PEM certificate", caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS: certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ServerName:   serverName,
		MinVersion:   tls.VersionTLS13,
		NextProtos:   []string{NetworkALPN},
	}, nil
}

func yamuxConfig(logger hclog.Logger) *yamux.Config {
	c := yamux.DefaultConfig()
	c.LogOutput = nil
	// yamux reports every lost connection as an error; the host and the
	// server say what it means themselves.
	c.Logger = debugLogger{logger.Named("yamux")}
	c.KeepAliveInterval = 15 * time.Second
	c.ConnectionWriteTimeout = 10 * time.Second
	return c
}

// debugLogger logs yamux's lines at debug level.
type debugLogger struct{ l hclog.Logger }

func (d debugLogger) Print(v ...any) { d.l.Debug(strings.TrimSpace(fmt.Sprint(v...))) }
func (d debugLogger) Printf(format string, v ...any) {
	d.l.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)))
}
func (d debugLogger) Println(v ...any) { d.l.Debug(strings.TrimSpace(fmt.Sprintln(v...))) }

// NetworkConfig configures ServeNetwork.
type NetworkConfig struct {
	// Listener is where hosts connect (plain TCP; ServeNetwork adds TLS).
	Listener net.Listener
	// TLS is the server's config (see NetworkTLS).
	TLS *tls.Config
	// NewServer returns the server of one host connection.
	NewServer func() Server
	Logger    hclog.Logger
}

// ServeNetwork serves hosts on cfg.Listener until ctx ends or the listener
// fails, then closes every connection and returns.
func ServeNetwork(ctx context.Context, cfg NetworkConfig) error {
	if cfg.TLS == nil {
		return errors.New("serve: no TLS config (a remote tool server only speaks mutual TLS)")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = cfg.Listener.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	grace := cancelGrace()
	for {
		raw, err := cfg.Listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("serve: accept: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveConn(ctx, cfg, grace, raw)
		}()
	}
}

// serveConn serves one host connection until it ends.
func serveConn(ctx context.Context, cfg NetworkConfig, grace time.Duration, raw net.Conn) {
	logger := cfg.Logger.With("peer", raw.RemoteAddr().String())
	conn := tls.Server(raw, cfg.TLS)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	err := conn.HandshakeContext(hctx)
	cancel()
	if err != nil {
		// A port probe (a load balancer's, Kubernetes') closes at once.
		if errors.Is(err, io.EOF) {
			logger.Debug("a connection closed before the TLS handshake")
		} else {
			logger.Warn("refused a connection", "error", err)
		}
		_ = raw.Close()
		return
	}
	sess, err := yamux.Server(conn, yamuxConfig(logger))
	if err != nil {
		_ = conn.Close()
		return
	}
	subject := ""
	if st := conn.ConnectionState(); len(st.PeerCertificates) > 0 {
		subject = st.PeerCertificates[0].Subject.CommonName
	}
	logger = logger.With("client", subject)
	logger.Info("host connected")

	impl := cfg.NewServer()
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.MaxConcurrentStreams(math.MaxUint32))
	hs := health.NewServer()
	hs.SetServingStatus("plugin", grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(gs, hs)
	// A tool still running past the grace period after its call ended
	// cannot be stopped from here; the host's connection is closed instead,
	// so that host reconnects to a fresh Load (other hosts are unaffected).
	overrun := func() { _ = sess.Close() }
	pluginv1.RegisterPluginServer(gs, &networkServer{
		grpcServer: &grpcServer{impl: impl, logger: logger, grace: grace, overrun: overrun},
		sess:       sess,
	})
	stop := context.AfterFunc(ctx, func() { _ = sess.Close() })
	defer stop()
	_ = gs.Serve(sess)
	gs.Stop()
	_ = sess.Close()
	if c, ok := impl.(io.Closer); ok {
		_ = c.Close()
	}
	logger.Info("host disconnected")
}

// networkServer is the Plugin service of one host connection: Load dials
// the host's capability server on a stream of that connection.
type networkServer struct {
	*grpcServer
	sess *yamux.Session
}

func (s *networkServer) Load(ctx context.Context, req *pluginv1.LoadRequest) (*pluginv1.LoadResponse, error) {
	return s.load(ctx, req, func() (*grpc.ClientConn, error) { return streamConn(s.sess) })
}

// streamConn is a gRPC client whose transport is a stream of sess (TLS
// protects the whole connection underneath).
func streamConn(sess *yamux.Session) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///kosong-plugin",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return sess.Open() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithIdleTimeout(math.MaxInt64),
	)
}

// NetworkConn is the host's connection to a remote tool server.
type NetworkConn struct {
	// Client is the plugin's client on the connection; its ServeHost serves
	// the host's capabilities on streams the server opens.
	Client *Client

	conn    *grpc.ClientConn
	raw     *recordingConn
	sess    *yamux.Session
	mu      sync.Mutex
	servers []*grpc.Server
}

// DialNetwork connects to a remote tool server at addr with mutual TLS.
// A server whose certificate the config's CA did not sign fails here; a
// server that refuses this host's certificate fails the first call (TLS 1.3
// reports the client's rejection after the handshake): see Failure.
func DialNetwork(ctx context.Context, addr string, cfg *tls.Config, logger hclog.Logger) (*NetworkConn, error) {
	if cfg == nil {
		return nil, errors.New("no TLS config (a remote tool server only speaks mutual TLS)")
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", addr, err)
		}
		cfg.ServerName = host
	}
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(hctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		var uerr x509.UnknownAuthorityError
		if errors.As(err, &uerr) {
			return nil, fmt.Errorf("the server's certificate is not signed by the CA in tls.ca: %w", err)
		}
		if strings.Contains(err.Error(), "no application protocol") {
			return nil, fmt.Errorf("the server at %s is not a kosong tool server (it does not speak %s): %w", addr, NetworkALPN, err)
		}
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if conn.ConnectionState().NegotiatedProtocol != NetworkALPN {
		_ = conn.Close()
		return nil, fmt.Errorf("the server at %s is not a kosong tool server (it does not speak %s)", addr, NetworkALPN)
	}
	rec := &recordingConn{Conn: conn}
	sess, err := yamux.Client(rec, yamuxConfig(logger))
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	gc, err := streamConn(sess)
	if err != nil {
		_ = sess.Close()
		return nil, err
	}
	c := &NetworkConn{conn: gc, raw: rec, sess: sess}
	c.Client = newClient(gc, func(h HostServer) (uint32, func()) { return c.serveHost(h), func() {} }, sess.CloseChan())
	return c, nil
}

// serveHost serves the host's capability server on the connection: the
// plugin reaches it on streams it opens, so the broker id of the Load
// request is 0.
func (c *NetworkConn) serveHost(h HostServer) uint32 {
	s := grpc.NewServer(grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.MaxConcurrentStreams(math.MaxUint32))
	RegisterHost(s, h)
	c.mu.Lock()
	c.servers = append(c.servers, s)
	c.mu.Unlock()
	go func() { _ = s.Serve(c.sess) }()
	return 0
}

// Done is closed once the connection is gone.
func (c *NetworkConn) Done() <-chan struct{} { return c.sess.CloseChan() }

// Failure says why the connection ended, when TLS said so: the server
// refusing this host's certificate, for one. Else "".
func (c *NetworkConn) Failure() string {
	if alert := c.raw.tlsAlert(); alert != nil {
		return fmt.Sprintf("the server refused this host's certificate (tls.cert is not signed by a CA it trusts): %v", alert)
	}
	err := c.raw.err()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return ""
	}
	return err.Error()
}

func isRemoteTLSError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// Close closes the connection and the capability servers on it.
func (c *NetworkConn) Close() {
	c.Client.Close()
	_ = c.conn.Close()
	_ = c.sess.Close()
	c.mu.Lock()
	servers := c.servers
	c.servers = nil
	c.mu.Unlock()
	for _, s := range servers {
		s.Stop()
	}
}

// recordingConn remembers the first read error of the TLS connection, and
// a TLS alert from the peer (the server refusing this host's certificate,
// say) however it shows up: TLS 1.3 completes the client's handshake before
// the server checks its certificate, so the refusal may first show as a
// failed write (the server has closed: "broken pipe") while the alert waits
// unread; closing after a failed write reads it first.
type recordingConn struct {
	net.Conn
	mu       sync.Mutex
	first    error
	alert    error
	writeErr bool
}

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.record(err)
	}
	return n, err
}

func (c *recordingConn) record(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first == nil {
		c.first = err
	}
	if c.alert == nil && isRemoteTLSError(err) {
		c.alert = err
	}
}

func (c *recordingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.mu.Lock()
		c.writeErr = true
		c.mu.Unlock()
	}
	return n, err
}

// alertWait bounds the read for an alert after a failed write.
const alertWait = time.Second

// Close reads what the peer sent before closing when a write failed and no
// alert was read: the peer's alert, if it sent one, is the cause.
func (c *recordingConn) Close() error {
	c.mu.Lock()
	drain := c.writeErr && c.alert == nil
	c.mu.Unlock()
	if drain {
		_ = c.Conn.SetReadDeadline(time.Now().Add(alertWait))
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
	}
	return c.Conn.Close()
}

// tlsAlert is the peer's TLS alert, if one was read.
func (c *recordingConn) tlsAlert() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alert
}

func (c *recordingConn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}
