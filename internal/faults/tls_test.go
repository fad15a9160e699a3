//go:build faults

package faults

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// A user of the node's own with a password that appears nowhere else, so
// that a test can look for it in every error and log line.
const (
	secretUser = "acemq-faults"
	secretPass = "Pw-9f3e1c-never-shown"
)

func secretUserOnNode(t *testing.T) {
	t.Helper()
	_, _ = Ctl("add_user", secretUser, secretPass)
	MustCtl(t, "set_permissions", "-p", "/", secretUser, ".*", ".*", ".*")
}

// certs is a CA and what it signed, made in the test.
type certs struct {
	caPEM      []byte
	ca         *x509.Certificate
	caKey      *ecdsa.PrivateKey
	serverPEM  []byte
	serverKey  []byte
	clientCert tls.Certificate
}

func newCA(t *testing.T, name string) *certs {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	c := &certs{ca: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	c.serverPEM, c.serverKey = c.sign(t, "localhost", x509.ExtKeyUsageServerAuth)
	cp, ck := c.sign(t, "acemq-faults-client", x509.ExtKeyUsageClientAuth)
	cert, err := tls.X509KeyPair(cp, ck)
	if err != nil {
		t.Fatal(err)
	}
	c.clientCert = cert
	return c
}

func (c *certs) sign(t *testing.T, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, &key.PublicKey, c.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// installOnNode writes the CA and the server's certificate and key where
// the node's TLS listener reads them, and clears its PEM cache so that the
// next handshake uses them.
func (c *certs) installOnNode(t *testing.T) {
	t.Helper()
	dir := filepath.Join(Dir(), "tls")
	for name, b := range map[string][]byte{"ca.pem": c.caPEM, "server.pem": c.serverPEM, "server.key": c.serverKey} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatalf("write %s (the fault node's TLS files): %v", name, err)
		}
	}
	MustCtl(t, "eval", "ssl:clear_pem_cache().")
}

func (c *certs) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.ca)
	return p
}

// logBuffer collects every log line of a connection.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var tlsURL = "amqps://" + secretUser + ":" + secretPass + "@localhost:" + strconv.Itoa(TLSPort) + "/"

func dialTLS(t *testing.T, cfg *tls.Config, logs *logBuffer) (*runtime.Connection, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := []runtime.DialOption{runtime.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}
	if cfg != nil {
		opts = append(opts, runtime.WithTLS(cfg))
	}
	return runtime.Dial(ctx, tlsURL, opts...)
}

func noSecret(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, secretPass) {
		t.Errorf("%s shows the password: %s", what, s)
	}
}

// amqps with a CA and a client certificate, made here, against the node's
// TLS listener (which asks for a client certificate); a wrong CA, no client
// certificate and no TLS configuration at all fail with a clear error, and
// no error or log line shows the password.
func TestTLS(t *testing.T) {
	Require(t)
	secretUserOnNode(t)
	good := newCA(t, "acemq faults CA")
	good.installOnNode(t)
	q := queue(t, "tls", nil)
	leakCheck(t)

	t.Run("CA and client certificate", func(t *testing.T) {
		logs := &logBuffer{}
		c, err := dialTLS(t, &tls.Config{RootCAs: good.pool(), Certificates: []tls.Certificate{good.clientCert}}, logs)
		if err != nil {
			t.Fatalf("amqps with the CA and a client certificate: %v", err)
		}
		got := make(chan string, 1)
		cs, err := runtime.Consume(ctxFor(t, 10*time.Second), c, runtime.ConsumerSpec{Queue: q, Routes: []runtime.Route{
			runtime.Handle(text, func(ctx context.Context, m *runtime.Message[string]) runtime.Ack {
				got <- m.Payload
				return runtime.Accept()
			}),
		}})
		if err != nil {
			t.Fatal(err)
		}
		publish(t, c, q, "over TLS")
		select {
		case b := <-got:
			if b != "over TLS" {
				t.Errorf("got %q", b)
			}
		case <-time.After(10 * time.Second):
			t.Error("nothing arrived over TLS")
		}
		closeAll(t, cs, c)
		noSecret(t, "a log line", logs.String())
	})

	wrong := newCA(t, "some other CA")
	cases := []struct {
		name string
		cfg  *tls.Config
		want string
	}{
		{"a wrong CA", &tls.Config{RootCAs: wrong.pool(), Certificates: []tls.Certificate{good.clientCert}}, "certificate signed by unknown authority"},
		{"no TLS configuration: the system's roots, verification on", nil, "certificate signed by unknown authority"},
		{"no client certificate", &tls.Config{RootCAs: good.pool()}, "certificate required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuffer{}
			start := time.Now()
			c, err := dialTLS(t, tc.cfg, logs)
			if err == nil {
				closeAll(t, nil, c)
				t.Fatalf("Dial succeeded, want a TLS error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial error %q does not say %q", err, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("a TLS failure took %s: it cannot pass by retrying and should fail at once", took)
			}
			noSecret(t, "the Dial error", err.Error())
			noSecret(t, "a log line", logs.String())
		})
	}

	t.Run("a malformed URL", func(t *testing.T) {
		logs := &logBuffer{}
		for _, u := range []string{
			"amqp://" + secretUser + ":" + secretPass + "@localhost:notaport/",
			"amqp://" + secretUser + ":" + secretPass + "@[::1/",
			"amqp//" + secretUser + ":" + secretPass + "@localhost/",
			"http://" + secretUser + ":" + secretPass + "@localhost/",
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			c, err := runtime.Dial(ctx, u, runtime.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
			cancel()
			if err == nil {
				closeAll(t, nil, c)
				t.Errorf("Dial(%s) succeeded", strings.ReplaceAll(u, secretPass, "xxxxx"))
				continue
			}
			noSecret(t, "the Dial error", err.Error())
		}
		noSecret(t, "a log line", logs.String())
	})
}
