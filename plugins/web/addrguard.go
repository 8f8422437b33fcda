package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// FetchURL connects only to public addresses unless its config block in
// agent.yaml allows more:
//
//	tools:
//	  - plugin: web
//	    tools: [FetchURL]
//	    config:
//	      allow_private_addresses: true          # every address, or:
//	      allowed_addresses: ["127.0.0.1:8080", "10.1.0.0/16", "fd00::1"]
//
// The check runs on the address each connection dials, after DNS resolution
// (so a name that resolves, or re-resolves, to a private address is refused)
// and for every redirect. Through a proxy from the environment (HTTP_PROXY,
// HTTPS_PROXY), the proxy itself is always allowed and the target's name is
// resolved and checked before each request.

// fetchConfig is FetchURL's config block.
type fetchConfig struct {
	AllowPrivateAddresses bool     `json:"allow_private_addresses"`
	AllowedAddresses      []string `json:"allowed_addresses"`
}

// addrPolicy says which non-public addresses FetchURL may connect to.
type addrPolicy struct {
	all      bool
	prefixes []netip.Prefix
	exact    []netip.AddrPort
}

// newAddrPolicy reads the config; an entry of allowed_addresses is an IP
// address, a CIDR prefix or IP:port.
func newAddrPolicy(c fetchConfig) (*addrPolicy, error) {
	p := &addrPolicy{all: c.AllowPrivateAddresses}
	for _, s := range c.AllowedAddresses {
		s = strings.TrimSpace(s)
		if pfx, err := netip.ParsePrefix(s); err == nil {
			p.prefixes = append(p.prefixes, pfx.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else if ap, err := netip.ParseAddrPort(s); err == nil {
			p.exact = append(p.exact, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
		} else {
			return nil, fmt.Errorf("FetchURL config.allowed_addresses: %q is not an IP address, a CIDR prefix (10.0.0.0/8) or IP:port (127.0.0.1:8080)", s)
		}
	}
	return p, nil
}

// check returns a *refusedAddrError when ap is not public and not allowed.
func (p *addrPolicy) check(ap netip.AddrPort) error {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	kind := nonPublic(ap.Addr())
	if kind == "" || p.all {
		return nil
	}
	for _, pfx := range p.prefixes {
		if pfx.Contains(ap.Addr()) {
			return nil
		}
	}
	for _, e := range p.exact {
		if e == ap {
			return nil
		}
	}
	return &refusedAddrError{addr: ap, kind: kind}
}

// The address ranges FetchURL refuses besides those netip classifies.
var (
	sharedRange   = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT; Alibaba Cloud's metadata is 100.100.100.200
	ietfRange     = netip.MustParsePrefix("192.0.0.0/24")  // IETF protocol assignments; Oracle Cloud's metadata is 192.0.0.192
	thisNetwork   = netip.MustParsePrefix("0.0.0.0/8")
	nat64Range    = netip.MustParsePrefix("64:ff9b::/96") // NAT64: an IPv4 address in IPv6
	metadataAddrs = map[netip.Addr]bool{
		netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack...
		netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
		netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
		netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud
	}
)

// nonPublic names the kind of a loopback, private, link-local, cloud
// metadata or otherwise non-public address, and is "" for a public one.
func nonPublic(a netip.Addr) string {
	a = a.Unmap()
	if nat64Range.Contains(a) {
		b := a.As16()
		if k := nonPublic(netip.AddrFrom4([4]byte(b[12:]))); k != "" {
			return k + " (through NAT64)"
		}
		return ""
	}
	switch {
	case !a.IsValid():
		return "an invalid address"
	case metadataAddrs[a]:
		return "a cloud metadata address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "an unspecified address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case sharedRange.Contains(a):
		return "a shared (carrier-grade NAT) address"
	case ietfRange.Contains(a):
		return "a reserved address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	return ""
}

// refusedAddrError is a connection FetchURL refused to make.
type refusedAddrError struct {
	addr netip.AddrPort
	kind string
}

func (e *refusedAddrError) Error() string {
	return fmt.Sprintf("%s is %s", e.addr, e.kind)
}

// refusedResult explains a refused address and how to allow it. target is
// the URL whose address was refused, requested the one asked for.
func refusedResult(e *refusedAddrError, target, requested string) pluginsdk.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "FetchURL refused to connect to %s, %s", e.addr, e.kind)
	if target != "" {
		fmt.Fprintf(&b, ", the address of %s", target)
		if target != requested {
			fmt.Fprintf(&b, " (redirected from %s)", requested)
		}
	}
	fmt.Fprintf(&b, ": loopback, private, link-local and cloud metadata addresses are not fetched by default. "+
		"To allow it, set `allow_private_addresses: true`, or list the address in `allowed_addresses` (e.g. [%q]), "+
		"in the config of FetchURL's tool reference in agent.yaml.", e.addr.String())
	return pluginsdk.Error(b.String()).WithBrief("Address refused")
}

// guardedClient returns a copy of base whose connections are checked
// against p, on every dial and redirect.
func guardedClient(base *http.Client, p *addrPolicy) *http.Client {
	c := *base
	var tr *http.Transport
	if t, ok := base.Transport.(*http.Transport); ok {
		tr = t.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	g := &guard{policy: p, proxies: map[string]bool{}}
	proxy := tr.Proxy
	tr.Proxy = func(req *http.Request) (*url.URL, error) {
		if proxy == nil {
			return nil, nil
		}
		u, err := proxy(req)
		if err != nil || u == nil {
			return u, err
		}
		g.trustProxy(u)
		return u, g.checkName(req.Context(), req.URL)
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g.isProxy(addr) {
			return plain.DialContext(ctx, network, addr)
		}
		return dialer.DialContext(ctx, network, addr)
	}
	tr.DialTLSContext = nil
	c.Transport = tr
	check := base.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if check != nil {
			if err := check(req, via); err != nil {
				return err
			}
		}
		// An IP literal is refused before any connection; names are checked
		// when dialled.
		if a, err := netip.ParseAddr(strings.Trim(req.URL.Hostname(), "[]")); err == nil {
			return p.check(netip.AddrPortFrom(a, portOf(req.URL)))
		}
		return nil
	}
	return &c
}

// guard checks the addresses a transport dials.
type guard struct {
	policy  *addrPolicy
	mu      sync.Mutex
	proxies map[string]bool // host:port of the environment's proxies
}

// control runs after DNS resolution, just before each connect(2): address
// is the IP:port dialled.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("cannot check the address %q: %v", address, err)
	}
	return g.policy.check(ap)
}

func (g *guard) trustProxy(u *url.URL) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.proxies[net.JoinHostPort(u.Hostname(), fmt.Sprint(portOf(u)))] = true
}

func (g *guard) isProxy(addr string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.proxies[addr]
}

// checkName resolves the URL's host and checks every address it has (used
// when a proxy, not FetchURL, makes the connection).
func (g *guard) checkName(ctx context.Context, u *url.URL) error {
	port := portOf(u)
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		return g.policy.check(netip.AddrPortFrom(a, port))
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := g.policy.check(netip.AddrPortFrom(a, port)); err != nil {
			return err
		}
	}
	return nil
}

// portOf is the URL's port, or its scheme's default.
func portOf(u *url.URL) uint16 {
	var port uint16
	if _, err := fmt.Sscan(u.Port(), &port); err == nil {
		return port
	}
	switch u.Scheme {
	case "https":
		return 443
	case "socks5", "socks5h":
		return 1080
	}
	return 80
}

// asRefused finds a refused address in a request error.
func asRefused(err error) (*refusedAddrError, string, bool) {
	var r *refusedAddrError
	if !errors.As(err, &r) {
		return nil, "", false
	}
	var ue *url.Error
	target := ""
	if errors.As(err, &ue) {
		target = ue.URL
	}
	return r, target, true
}
