package acemqtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultURL is the broker used when ACEMQ_TEST_URL is not set.
const DefaultURL = "amqp://guest:guest@localhost:5672/"

// URL is the broker tests use: ACEMQ_TEST_URL, or DefaultURL.
func URL() string {
	if u := os.Getenv("ACEMQ_TEST_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// MgmtURL is the broker's management API: ACEMQ_TEST_MGMT_URL, or http on
// URL's host, port 15672. Its credentials are its own user info, else
// URL's.
func MgmtURL() string {
	if m := os.Getenv("ACEMQ_TEST_MGMT_URL"); m != "" {
		return strings.TrimRight(m, "/")
	}
	u, err := url.Parse(URL())
	if err != nil {
		return "http://localhost:15672"
	}
	return "http://" + net.JoinHostPort(u.Hostname(), "15672")
}

// Require returns URL once the broker answers on its port. A broker that
// does not answer skips the test, or fails it when CI=true. Under
// go test -short the test is skipped without trying, CI=true or not: -short
// asks for the tests that need no broker.
func Require(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("acemqtest: needs a broker: skipped under -short")
	}
	u := URL()
	parsed, err := url.Parse(u)
	if err != nil {
		tb.Fatalf("acemqtest: ACEMQ_TEST_URL: %v", err)
	}
	host := parsed.Host
	if parsed.Port() == "" {
		port := "5672"
		if parsed.Scheme == "amqps" {
			port = "5671"
		}
		host = net.JoinHostPort(parsed.Hostname(), port)
	}
	conn, err := net.DialTimeout("tcp", host, 3*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("acemqtest: no broker at %s (CI=true: a missing broker fails): %v", parsed.Redacted(), err)
		}
		tb.Skipf("acemqtest: no broker at %s (set ACEMQ_TEST_URL): %v", parsed.Redacted(), err)
	}
	conn.Close()
	return u
}

// Dial connects to the test broker (see Require) and closes the connection
// when the test ends.
func Dial(tb testing.TB, opts ...runtime.DialOption) *runtime.Connection {
	tb.Helper()
	return dialURL(tb, Require(tb), opts...)
}

func dialURL(tb testing.TB, u string, opts ...runtime.DialOption) *runtime.Connection {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, u, opts...)
	if err != nil {
		tb.Fatalf("acemqtest: %v", err)
	}
	closeIt := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	}
	dialed.Lock()
	dialed.closers[tb] = append(dialed.closers[tb], closeIt)
	dialed.Unlock()
	tb.Cleanup(func() {
		closeIt()
		dialed.Lock()
		delete(dialed.closers, tb)
		dialed.Unlock()
	})
	return c
}

// dialed holds the Close of every connection Dial opened, by test, so that
// Queue's cleanup can close them before it deletes the queues: cleanups run
// last-registered first, and a consumer still open when its queue goes
// resubscribes, declaring q.dlq and q.parked again (seen on RabbitMQ 4.0).
var dialed = struct {
	sync.Mutex
	closers map[testing.TB][]func()
}{closers: map[testing.TB][]func(){}}

// closeDialed closes the connections Dial opened for tb (Close is
// idempotent, so their own cleanup closing them again is harmless).
func closeDialed(tb testing.TB) {
	dialed.Lock()
	fs := dialed.closers[tb]
	dialed.Unlock()
	for _, f := range fs {
		f()
	}
}

// Name is a unique name with the given prefix, safe for a queue, an
// exchange or a vhost: "test.<prefix>.<8 hex digits>".
func Name(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("test.%s.%s", prefix, hex.EncodeToString(b))
}

// Queue is a queue name of the test's own. When the test ends, the queue
// and every queue named after it (q.dlq, q.parked, q.retry.<N>s) are
// deleted (after the connections Dial opened for the test are closed, so no
// consumer of theirs declares them again); the rungs are found through the
// management API when it answers.
func Queue(tb testing.TB, prefix string) string {
	tb.Helper()
	u := Require(tb)
	q := Name(prefix)
	tb.Cleanup(func() {
		closeDialed(tb)
		deleteQueues(u, q)
	})
	return q
}

func deleteQueues(u, q string) {
	conn, err := amqp.Dial(u)
	if err != nil {
		return
	}
	defer conn.Close()
	names := []string{q, runtime.DeadLetterQueue(q), runtime.ParkedQueue(q)}
	var listed []struct {
		Name string `json:"name"`
	}
	if err := mgmt(http.MethodGet, "queues/"+url.PathEscape(vhostOf(u))+"?columns=name", nil, &listed); err == nil {
		for _, l := range listed {
			if strings.HasPrefix(l.Name, q+".") && l.Name != names[1] && l.Name != names[2] {
				names = append(names, l.Name)
			}
		}
	}
	for _, n := range names {
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		_, _ = ch.QueueDelete(n, false, false, false)
		_ = ch.Close()
	}
}

// VHost creates a virtual host of the test's own on the broker, gives
// URL's user every permission on it, and deletes it (and all it holds)
// when the test ends. It returns URL pointing at it. It needs the
// management API (see MgmtURL) and a user allowed to create vhosts.
func VHost(tb testing.TB) string {
	tb.Helper()
	base := Require(tb)
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("acemqtest: %v", err)
	}
	name := Name("vhost")
	path := "vhosts/" + url.PathEscape(name)
	if err := mgmt(http.MethodPut, path, map[string]any{}, nil); err != nil {
		tb.Fatalf("acemqtest: create vhost %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = mgmt(http.MethodDelete, path, nil, nil) })
	perms := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	if err := mgmt(http.MethodPut, "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(u.User.Username()), perms, nil); err != nil {
		tb.Fatalf("acemqtest: permissions on vhost %s: %v", name, err)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// DialVHost connects to a vhost of the test's own (see VHost): generated
// code declares and consumes its fixed queue names there without meeting
// another test's.
func DialVHost(tb testing.TB, opts ...runtime.DialOption) *runtime.Connection {
	tb.Helper()
	return dialURL(tb, VHost(tb), opts...)
}

func vhostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Path == "" || p.Path == "/" {
		return "/"
	}
	return strings.TrimPrefix(p.Path, "/")
}

// mgmt calls the management API: body (when not nil) is sent as JSON, the
// answer decoded into out (when not nil).
func mgmt(method, path string, body, out any) error {
	m, err := url.Parse(MgmtURL())
	if err != nil {
		return err
	}
	user, pass := "", ""
	if m.User != nil {
		user = m.User.Username()
		pass, _ = m.User.Password()
		m.User = nil
	} else if b, err := url.Parse(URL()); err == nil && b.User != nil {
		user = b.User.Username()
		pass, _ = b.User.Password()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, m.String()+"/api/"+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(user, pass)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("management API at %s: %w", m.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("management API %s %s: %s %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}
