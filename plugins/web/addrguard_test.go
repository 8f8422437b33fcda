package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestNonPublic(t *testing.T) {
	tests := []struct{ addr, kind string }{
		{"127.0.0.1", "a loopback address"},
		{"127.8.9.10", "a loopback address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"0.0.0.0", "an unspecified address"},
		{"0.1.2.3", "an unspecified address"},
		{"::", "an unspecified address"},
		{"10.1.2.3", "a private address"},
		{"172.16.0.1", "a private address"},
		{"172.31.255.255", "a private address"},
		{"192.168.1.1", "a private address"},
		{"fd12:3456::1", "a private address"},
		{"169.254.169.254", "a cloud metadata address"},
		{"fd00:ec2::254", "a cloud metadata address"},
		{"100.100.100.200", "a cloud metadata address"},
		{"192.0.0.192", "a cloud metadata address"},
		{"169.254.1.1", "a link-local address"},
		{"fe80::1", "a link-local address"},
		{"100.64.0.1", "a shared (carrier-grade NAT) address"},
		{"224.0.0.1", "a link-local address"},
		{"239.1.1.1", "a multicast address"},
		{"64:ff9b::7f00:1", "a loopback address (through NAT64)"},
		{"64:ff9b::a9fe:a9fe", "a cloud metadata address (through NAT64)"},
		{"64:ff9b::808:808", ""},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"2001:4860:4860::8888", ""},
		{"::ffff:8.8.8.8", ""},
	}
	for _, tt := range tests {
		if got := nonPublic(netip.MustParseAddr(tt.addr)); got != tt.kind {
			t.Errorf("%s: %q, want %q", tt.addr, got, tt.kind)
		}
	}
}

func TestAddrPolicy(t *testing.T) {
	p, err := newAddrPolicy(fetchConfig{AllowedAddresses: []string{"10.1.0.0/16", "192.168.1.7", " 127.0.0.1:8080 ", "[::1]:9090"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		ok   bool
	}{
		{"10.1.2.3:80", true}, {"10.2.0.1:80", false}, {"192.168.1.7:443", true}, {"192.168.1.8:443", false},
		{"127.0.0.1:8080", true}, {"127.0.0.1:8081", false}, {"[::ffff:127.0.0.1]:8080", true},
		{"[::1]:9090", true}, {"[::1]:8080", false}, {"8.8.8.8:53", true}, {"169.254.169.254:80", false},
	}
	for _, tt := range tests {
		if err := p.check(netip.MustParseAddrPort(tt.addr)); (err == nil) != tt.ok {
			t.Errorf("%s: %v, want allowed %v", tt.addr, err, tt.ok)
		}
	}
	if _, err := newAddrPolicy(fetchConfig{AllowedAddresses: []string{"localhost"}}); err == nil ||
		err.Error() != `FetchURL config.allowed_addresses: "localhost" is not an IP address, a CIDR prefix (10.0.0.0/8) or IP:port (127.0.0.1:8080)` {
		t.Fatalf("err = %v", err)
	}
}

// refusedMessage is FetchURL's message for a refused address.
func refusedMessage(addr, kind, target, from string) string {
	via := ""
	if from != "" {
		via = " (redirected from " + from + ")"
	}
	return fmt.Sprintf("FetchURL refused to connect to %s, %s, the address of %s%s: loopback, private, link-local and cloud metadata "+
		"addresses are not fetched by default. To allow it, set `allow_private_addresses: true`, or list the address in "+
		"`allowed_addresses` (e.g. [%q]), in the config of FetchURL's tool reference in agent.yaml.", addr, kind, target, via, addr)
}

// TestFetchURLAddresses: the test servers listen on loopback addresses,
// which are refused by default, also after a redirect from an allowed one.
func TestFetchURLAddresses(t *testing.T) {
	other := testServer(t) // a port of a loopback address: not allowed
	otherAddr := strings.TrimPrefix(other.URL, "http://")
	ou, _ := url.Parse(other.URL)
	otherByName := "http://localhost:" + ou.Port()
	redirects := testMux()
	redirects.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/plain", http.StatusFound)
	})
	redirects.HandleFunc("/to-other-by-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherByName+"/plain", http.StatusFound)
	})
	redirects.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	allowed := httptest.NewServer(redirects) // allowed by its address and port
	t.Cleanup(allowed.Close)
	allowedAddr := strings.TrimPrefix(allowed.URL, "http://")

	o := options{client: newClient(5 * time.Second), maxBytes: 4096}
	tests := []struct {
		name    string
		config  string
		url     string
		kind    pluginsdk.ResultKind
		message string // exact, or a prefix when ok
	}{
		{"loopback refused", "", other.URL + "/plain", pluginsdk.KindError,
			refusedMessage(otherAddr, "a loopback address", other.URL+"/plain", "")},
		{"loopback name refused after resolution", "", otherByName + "/plain", pluginsdk.KindError, ""},
		{"metadata refused", "", "http://169.254.169.254/latest/meta-data/", pluginsdk.KindError,
			refusedMessage("169.254.169.254:80", "a cloud metadata address", "http://169.254.169.254/latest/meta-data/", "")},
		{"allowed by address and port", fmt.Sprintf(`{"allowed_addresses": [%q]}`, allowedAddr), allowed.URL + "/plain", pluginsdk.KindOk,
			"Fetched " + allowed.URL + "/plain"},
		{"redirect from an allowed address refused", fmt.Sprintf(`{"allowed_addresses": [%q]}`, allowedAddr), allowed.URL + "/to-other",
			pluginsdk.KindError, refusedMessage(otherAddr, "a loopback address", other.URL+"/plain", allowed.URL+"/to-other")},
		{"redirect to a name refused when dialled", fmt.Sprintf(`{"allowed_addresses": [%q]}`, allowedAddr), allowed.URL + "/to-other-by-name",
			pluginsdk.KindError, ""},
		{"redirect to metadata refused", fmt.Sprintf(`{"allowed_addresses": [%q]}`, allowedAddr), allowed.URL + "/to-metadata",
			pluginsdk.KindError, refusedMessage("169.254.169.254:80", "a cloud metadata address", "http://169.254.169.254/latest/meta-data/", allowed.URL+"/to-metadata")},
		{"allowed by prefix", `{"allowed_addresses": ["127.0.0.0/8", "::1"]}`, allowed.URL + "/to-other", pluginsdk.KindOk,
			"Fetched " + other.URL + "/plain (text/plain, 10 bytes). Redirected from " + allowed.URL + "/to-other."},
		{"allowed by allow_private_addresses", `{"allow_private_addresses": true}`, otherByName + "/plain", pluginsdk.KindOk, "Fetched " + otherByName + "/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, o, plugintest.Options{Tools: []string{"FetchURL"}, Configs: map[string]string{"FetchURL": tt.config}})
			got := h.MustCall(t, "FetchURL", fmt.Sprintf(`{"url": %q}`, tt.url))
			if got.Kind != tt.kind {
				t.Fatalf("got %+v", got)
			}
			switch {
			case tt.kind == pluginsdk.KindOk:
				if !strings.HasPrefix(got.Message, tt.message) || !strings.Contains(got.Text(), "just text") {
					t.Fatalf("got %+v", got)
				}
			case tt.message != "":
				if got.Message != tt.message || got.Brief != "Address refused" {
					t.Fatalf("message\n%q, want\n%q", got.Message, tt.message)
				}
			default: // localhost resolves to 127.0.0.1 or ::1, whichever was dialled last
				if !strings.HasPrefix(got.Message, "FetchURL refused to connect to ") || !strings.Contains(got.Message, ", a loopback address, the address of "+otherByName+"/plain") {
					t.Fatalf("message %q", got.Message)
				}
			}
		})
	}
}

func TestFetchURLConfigErrors(t *testing.T) {
	o := options{client: newClient(5 * time.Second), maxBytes: 4096}
	tests := []struct{ config, reason string }{
		{`{"allowed_addresses": ["example.com"]}`, `FetchURL config.allowed_addresses: "example.com" is not an IP address, a CIDR prefix (10.0.0.0/8) or IP:port (127.0.0.1:8080)`},
		{`{"allow_private_addresses": "yes"}`, "invalid FetchURL config: "},
	}
	for _, tt := range tests {
		_, loads := plugintest.Load(t, plugintest.Options{Tools: []string{"FetchURL"}, Configs: map[string]string{"FetchURL": tt.config}}, newDefinitions(o)...)
		var got plugintest.ToolLoad
		for _, l := range loads {
			if l.Name == "FetchURL" {
				got = l
			}
		}
		if got.Status != plugintest.Failed || !strings.HasPrefix(got.Reason, tt.reason) {
			t.Errorf("%s: load = %v %q", tt.config, got.Status, got.Reason)
		}
	}
}

// TestFetchURLThroughProxy: with a proxy, FetchURL connects to the proxy
// (even on a loopback address) and checks the target's addresses itself.
func TestFetchURLThroughProxy(t *testing.T) {
	asked := make(chan string, 10)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.String()
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "via proxy\n")
	}))
	t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	o := options{client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}, maxBytes: 4096}
	h := newHarness(t, o, plugintest.Options{Tools: []string{"FetchURL"}})
	got := h.MustCall(t, "FetchURL", `{"url": "http://10.20.30.40/secret"}`)
	if got.Kind != pluginsdk.KindError || got.Message != refusedMessage("10.20.30.40:80", "a private address", "http://10.20.30.40/secret", "") {
		t.Fatalf("private target: %+v", got)
	}
	got = h.MustCall(t, "FetchURL", `{"url": "http://93.184.215.14/page"}`) // a public address, never dialled: the proxy answers
	if got.Kind != pluginsdk.KindOk || got.Text() != "via proxy\n" {
		t.Fatalf("public target: %+v", got)
	}
	if len(asked) != 1 || <-asked != "http://93.184.215.14/page" {
		t.Fatal("the proxy was not asked for the public target only")
	}
}
