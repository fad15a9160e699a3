package runtime_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// testCA is a certificate authority made in the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(tb testing.TB) *testCA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "acemq test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// server is a server certificate for one name only: a DNS name, or an IP
// address when name parses as one.
func (ca *testCA) server(tb testing.TB, name string) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// forwardTLSStarted is a TLS-terminating front end in the test process in
// front of the broker's plain port, presenting cert; closed at cleanup.
func forwardTLSStarted(tb testing.TB, cert tls.Certificate) *forwarder {
	tb.Helper()
	u, err := url.Parse(brokertest.Require(tb))
	if err != nil {
		tb.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5672")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return forwardFrom(tb, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), target)
}

// Two TLS nodes whose certificates name different hosts (localhost and
// 127.0.0.1), one *tls.Config with no ServerName: when the first goes
// down, the reconnect to the second verifies the second's name, not the
// first's, and the caller's config is left as it was given.
func TestTLSFailoverVerifiesEachNodesName(t *testing.T) {
	t.Parallel()
	brokertest.Require(t)
	ca := newTestCA(t)
	first := forwardTLSStarted(t, ca.server(t, "localhost"))
	second := forwardTLSStarted(t, ca.server(t, "127.0.0.1"))
	_, firstPort, _ := net.SplitHostPort(first.ln.Addr().String())
	urls := []string{
		amqpsAt(t, "localhost:"+firstPort),
		amqpsAt(t, second.ln.Addr().String()),
	}
	cfg := &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS12}
	capture, logger := newLogCapture()
	c, err := runtime.Dial(ctxFor(t, 15*time.Second), urls[0], runtime.WithAddresses(urls[1]),
		runtime.WithTLS(cfg), runtime.WithLogger(logger),
		runtime.WithReconnectBackoff(50*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatalf("Dial the first TLS node: %v", err)
	}
	defer closeConn(c)
	if cfg.ServerName != "" {
		t.Errorf("Dial wrote ServerName %q into the caller's *tls.Config", cfg.ServerName)
	}
	q := brokertest.Queue(t, "tls-failover")
	declare(t, c, runtime.NewTopology().Queue(runtime.Queue{Name: q}))
	publishText(t, c, q, "via localhost")

	// The first node goes down; the shared broker stays up.
	first.Close()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = runtime.Publish(ctx, c, textType, "", "via 127.0.0.1", runtime.WithRoutingKey(q))
		cancel()
		if last == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if last != nil {
		t.Fatalf("no publish went through after the first TLS node went down: %v\nlogs:\n%s", last, capture.dump())
	}
	if second.accepted.Load() == 0 {
		t.Fatal("the publish went through, but not via the second node")
	}
	for _, body := range []string{"via localhost", "via 127.0.0.1"} {
		if got := string(getOne(t, q, wait).Body); got != body {
			t.Errorf("got %q, want %q", got, body)
		}
	}
	if strings.Contains(capture.dump(), "x509") {
		t.Errorf("a reconnect failed certificate verification:\n%s", capture.dump())
	}
	if cfg.ServerName != "" {
		t.Errorf("a reconnect wrote ServerName %q into the caller's *tls.Config", cfg.ServerName)
	}
}

// An explicitly set ServerName is the caller's: it is used for every node,
// so a node whose certificate names another host is refused.
func TestTLSKeepsAnExplicitServerName(t *testing.T) {
	t.Parallel()
	brokertest.Require(t)
	ca := newTestCA(t)
	node := forwardTLSStarted(t, ca.server(t, "127.0.0.1"))
	cfg := &tls.Config{RootCAs: ca.pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), amqpsAt(t, node.ln.Addr().String()), runtime.WithTLS(cfg))
	if err == nil {
		closeConn(c)
		t.Fatal("Dial succeeded, want the certificate refused for the ServerName set (localhost)")
	}
	if !strings.Contains(err.Error(), "localhost") || !strings.Contains(err.Error(), "x509") {
		t.Errorf("Dial error %q does not name the ServerName set", err)
	}
	if cfg.ServerName != "localhost" {
		t.Errorf("ServerName became %q", cfg.ServerName)
	}
}

// amqpsAt is the test broker's URL as amqps:// at hostport.
func amqpsAt(tb testing.TB, hostport string) string {
	tb.Helper()
	return "amqps" + strings.TrimPrefix(urlAt(tb, hostport), "amqp")
}

// forwardTLSAsking is forwardTLSStarted whose front end asks each client
// for a certificate signed by ca, requiring one when require is set.
func forwardTLSAsking(tb testing.TB, ca *testCA, require bool) *forwarder {
	tb.Helper()
	u, err := url.Parse(brokertest.Require(tb))
	if err != nil {
		tb.Fatal(err)
	}
	target := net.JoinHostPort(u.Hostname(), u.Port())
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5672")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	auth := tls.VerifyClientCertIfGiven
	if require {
		auth = tls.RequireAndVerifyClientCert
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{ca.server(tb, "127.0.0.1")}, ClientCAs: ca.pool(), ClientAuth: auth}
	return forwardFrom(tb, tls.NewListener(ln, cfg), target)
}

// A node that requires a client certificate refuses one that has none
// after the client's TLS 1.3 handshake is done; however the refusal
// reaches amqp091-go (the alert, or only a closed connection), the Dial
// error says the broker asked for a certificate, at once and without
// trying again. A node that only asks still lets such a client in.
func TestDialSaysAClientCertificateIsRequired(t *testing.T) {
	t.Parallel()
	brokertest.Require(t)
	ca := newTestCA(t)
	node := forwardTLSAsking(t, ca, true)
	for i := range 10 {
		cfg := &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS13}
		start := time.Now()
		c, err := runtime.Dial(ctxFor(t, 10*time.Second), amqpsAt(t, node.ln.Addr().String()), runtime.WithTLS(cfg))
		if err == nil {
			closeConn(c)
			t.Fatal("Dial without a client certificate succeeded, want it refused")
		}
		for _, want := range []string{"certificate required", "asked for a client certificate"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("attempt %d: Dial error %q does not say %q", i, err, want)
			}
		}
		if errors.Is(err, runtime.ErrUnreachable) {
			t.Errorf("attempt %d: Dial error %q matches ErrUnreachable: a missing certificate is not fixed by trying again", i, err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("attempt %d: the refusal took %s", i, took)
		}
		if cfg.GetClientCertificate != nil {
			t.Fatal("Dial set GetClientCertificate on the caller's *tls.Config")
		}
	}

	asking := forwardTLSAsking(t, ca, false)
	cfg := &tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS13}
	c, err := runtime.Dial(ctxFor(t, 10*time.Second), amqpsAt(t, asking.ln.Addr().String()), runtime.WithTLS(cfg))
	if err != nil {
		t.Fatalf("Dial a node that asks for (and does not require) a client certificate: %v", err)
	}
	closeConn(c)
}
