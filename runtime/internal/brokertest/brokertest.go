// Package brokertest gives tests a real RabbitMQ: its URL
// (ACEMQ_TEST_URL), a connection check (Require: skips under -short, fails
// under CI=true, skips elsewhere), unique names, queues of a test's own,
// and the management API (ACEMQ_TEST_MGMT_URL, default port 15672 on
// ACEMQ_TEST_URL's host) for reading queue arguments back.
//
// It is the one implementation of these: runtime/acemqtest (the public
// test helpers, for users) delegates URL, MgmtURL, Require, Name, Queue
// and Management to it, and the root module's internal/brokertest
// delegates to acemqtest. It imports no package of the runtime but
// runtime/wire (which imports none), so the runtime's own tests (package
// runtime included) can use it.
package brokertest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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

	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultURL is used when ACEMQ_TEST_URL is not set.
const DefaultURL = "amqp://guest:guest@localhost:5672/"

// DefaultMgmtPort is the management API's port when ACEMQ_TEST_MGMT_URL is
// not set: the management URL is then http://<ACEMQ_TEST_URL's host>:15672.
const DefaultMgmtPort = "15672"

// URL is the broker the tests use: ACEMQ_TEST_URL, or DefaultURL.
func URL() string {
	if u := os.Getenv("ACEMQ_TEST_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// MgmtURL is the management API the tests read the broker through:
// ACEMQ_TEST_MGMT_URL (e.g. http://127.0.0.1:15674), or http on
// ACEMQ_TEST_URL's host with port 15672. It never ends with a slash and
// never carries credentials (see mgmtRequest).
func MgmtURL() string {
	if m := os.Getenv("ACEMQ_TEST_MGMT_URL"); m != "" {
		if u, err := url.Parse(m); err == nil {
			u.User = nil
			return strings.TrimSuffix(u.String(), "/")
		}
		return strings.TrimSuffix(m, "/")
	}
	host := "localhost"
	if u, err := url.Parse(URL()); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "http://" + net.JoinHostPort(host, DefaultMgmtPort)
}

// mgmtRequest builds a request for the management API path (relative to
// /api/, {vhost} replaced by ACEMQ_TEST_URL's vhost). The credentials are
// ACEMQ_TEST_MGMT_URL's user info when it has one, else ACEMQ_TEST_URL's.
func mgmtRequest(method, path string) (*http.Request, error) {
	u, err := url.Parse(URL())
	if err != nil {
		return nil, fmt.Errorf("ACEMQ_TEST_URL: %w", err)
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	if m := os.Getenv("ACEMQ_TEST_MGMT_URL"); m != "" {
		mu, err := url.Parse(m)
		if err != nil {
			return nil, fmt.Errorf("ACEMQ_TEST_MGMT_URL: %w", err)
		}
		if mu.User != nil {
			user = mu.User.Username()
			pass, _ = mu.User.Password()
		}
	}
	path = strings.ReplaceAll(path, "{vhost}", url.PathEscape(VHostOf(u.String())))
	req, err := http.NewRequest(method, MgmtURL()+"/api/"+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(user, pass)
	return req, nil
}

// VHostOf is the virtual host an AMQP URL names ("/" when it names none).
func VHostOf(amqpURL string) string {
	u, err := url.Parse(amqpURL)
	if err != nil || u.Path == "" || u.Path == "/" {
		return "/"
	}
	return strings.TrimPrefix(u.Path, "/")
}

// mgmtClient bounds a management call: a broker that hangs fails the
// test instead of blocking it until go test's timeout.
var mgmtClient = &http.Client{Timeout: 30 * time.Second}

// ManagementCall calls the management API: method on path (relative to
// /api/; {vhost} stands for ACEMQ_TEST_URL's vhost, path-escaped), body
// (when not nil) sent as JSON, the answer decoded into out (when not nil).
// Any answer but a 2xx is an error carrying the broker's reason.
func ManagementCall(method, path string, body, out any) error {
	req, err := mgmtRequest(method, path)
	if err != nil {
		return err
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := mgmtClient.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return fmt.Errorf("management API at %s: nothing answers (%s): %w, or set ACEMQ_TEST_MGMT_URL to where it answers: %w", MgmtURL(), op, ErrNoManagement, err)
		}
		return fmt.Errorf("management API at %s: %w", MgmtURL(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("management API %s %s: %s %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// ErrNoManagement matches the error of a call to the management API that
// could not connect: what a RabbitMQ without its management plugin looks
// like.
var ErrNoManagement = errors.New("RabbitMQ's management plugin (rabbitmq_management) is needed; enable it with `rabbitmq-plugins enable rabbitmq_management`")

// Management GETs the management API path (relative to /api/; {vhost}
// stands for the test vhost, path-escaped) and decodes its JSON into v.
func Management(path string, v any) error {
	return ManagementCall(http.MethodGet, path, nil, v)
}

// Require returns URL once the broker answers on its port. Under -short
// the test is skipped without trying (go test -short is the broker-free
// quick test, even under CI=true: -short is an explicit request).
// Otherwise, under CI=true a broker that does not answer fails the test;
// elsewhere the test is skipped with a hint.
func Require(tb testing.TB) string {
	tb.Helper()
	skipShort(tb)
	u := URL()
	parsed, err := url.Parse(u)
	if err != nil {
		tb.Fatalf("ACEMQ_TEST_URL: %v", err)
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
			tb.Fatalf("no broker at %s (CI=true: a missing broker fails): %v", parsed.Redacted(), err)
		}
		tb.Skipf("no broker at %s (start RabbitMQ, or set ACEMQ_TEST_URL to one): %v", parsed.Redacted(), err)
	}
	conn.Close()
	return u
}

// skipShort skips the test under -short: go test -short is the
// broker-free quick test (make quick), CI=true or not.
func skipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a broker: skipped under -short (the broker-free quick test)")
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
// deleted, after what the test registered with CloseBeforeCleanup is
// closed (so no consumer of theirs declares them again); the rungs are
// found through the management API when it answers. A queue needs the
// broker: Queue calls Require (so it skips under -short).
func Queue(tb testing.TB, prefix string) string {
	tb.Helper()
	Require(tb)
	q := Name(prefix)
	tb.Cleanup(func() {
		closeRegistered(tb)
		DeleteQueues(tb, q)
	})
	return q
}

// closers holds, by test, what CloseBeforeCleanup registered.
var closers = struct {
	sync.Mutex
	m map[testing.TB][]func()
}{m: map[testing.TB][]func(){}}

// CloseBeforeCleanup registers close (idempotent: it runs again in the
// caller's own cleanup) to run before Queue's cleanup deletes the test's
// queues. Cleanups run last-registered first, so a connection dialled
// before Queue was called would otherwise still be open then, and a
// consumer on it whose queue is deleted resubscribes, declaring q.dlq and
// q.parked again: they were left behind on the broker.
func CloseBeforeCleanup(tb testing.TB, close func()) {
	closers.Lock()
	closers.m[tb] = append(closers.m[tb], close)
	closers.Unlock()
	tb.Cleanup(func() {
		closers.Lock()
		delete(closers.m, tb)
		closers.Unlock()
	})
}

func closeRegistered(tb testing.TB) {
	closers.Lock()
	fs := closers.m[tb]
	closers.Unlock()
	for _, f := range fs {
		f()
	}
}

// Raw opens a plain amqp091 connection and channel, closed at cleanup.
func Raw(tb testing.TB) (*amqp.Connection, *amqp.Channel) {
	tb.Helper()
	conn, err := amqp.Dial(Require(tb))
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("channel: %v", err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn, ch
}

// DeleteQueues deletes q and every queue named q.<something>.
func DeleteQueues(tb testing.TB, q string) {
	conn, err := amqp.Dial(URL())
	if err != nil {
		return
	}
	defer conn.Close()
	names, err := QueueNames()
	if err != nil {
		names = []string{q, wire.DeadLetterQueue(q), wire.ParkedQueue(q)}
	}
	for _, n := range names {
		if n != q && !strings.HasPrefix(n, q+".") {
			continue
		}
		ch, err := conn.Channel()
		if err != nil {
			return
		}
		_, _ = ch.QueueDelete(n, false, false, false)
		ch.Close()
	}
}

// QueueInfo is what the management API says of a queue.
type QueueInfo struct {
	Name      string         `json:"name"`
	Durable   bool           `json:"durable"`
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments"`
	Messages  int            `json:"messages"`
}

// QueueNames lists every queue of the vhost.
func QueueNames() ([]string, error) {
	var qs []QueueInfo
	if err := Management("queues/{vhost}?columns=name", &qs); err != nil {
		return nil, err
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out, nil
}

// QueueDetails reads a queue back through the management API.
func QueueDetails(tb testing.TB, name string) QueueInfo {
	tb.Helper()
	var q QueueInfo
	if err := Management("queues/{vhost}/"+url.PathEscape(name), &q); err != nil {
		tb.Fatalf("queue %s: %v", name, err)
	}
	return q
}

// Bindings lists the bindings whose destination is queue.
func Bindings(tb testing.TB, queue string) []map[string]any {
	tb.Helper()
	var bs []map[string]any
	if err := Management("queues/{vhost}/"+url.PathEscape(queue)+"/bindings", &bs); err != nil {
		tb.Fatalf("bindings of %s: %v", queue, err)
	}
	return bs
}

// ManagementSend sends body (JSON-encoded; nil for none) with method to
// the management API path (as ManagementCall): PUT vhosts/x, POST
// definitions/x, DELETE ...
func ManagementSend(method, path string, body any) error {
	return ManagementCall(method, path, body, nil)
}

// KillConnections makes the broker close every connection whose client
// named itself clientName (amqp091's connection_name property), as a
// broker restart or a network cut would, and returns how many it closed.
// The management API lists a new connection a few seconds late, so it
// waits up to 10s for at least one.
func KillConnections(tb testing.TB, clientName string) int {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var conns []struct {
			Name             string `json:"name"`
			ClientProperties struct {
				ConnectionName string `json:"connection_name"`
			} `json:"client_properties"`
		}
		if err := Management("connections", &conns); err != nil {
			tb.Fatalf("list connections: %v", err)
		}
		n := 0
		for _, c := range conns {
			if c.ClientProperties.ConnectionName != clientName {
				continue
			}
			if err := ManagementCall(http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil, nil); err != nil {
				tb.Fatalf("close connection %s: %v", c.Name, err)
			}
			n++
		}
		if n > 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// ChannelCount is how many channels the broker lists for the connections
// whose client named itself clientName. The management API's figures lag a
// few seconds behind the broker.
func ChannelCount(tb testing.TB, clientName string) int {
	tb.Helper()
	// A channel whose connection is closing lists its connection_details
	// as [] instead of an object: such a channel is not counted.
	var chans []struct {
		ConnectionDetails json.RawMessage `json:"connection_details"`
	}
	if err := Management("channels?columns=connection_details.name", &chans); err != nil {
		tb.Fatalf("list channels: %v", err)
	}
	var conns []struct {
		Name             string `json:"name"`
		ClientProperties struct {
			ConnectionName string `json:"connection_name"`
		} `json:"client_properties"`
	}
	if err := Management("connections", &conns); err != nil {
		tb.Fatalf("list connections: %v", err)
	}
	mine := map[string]bool{}
	for _, c := range conns {
		if c.ClientProperties.ConnectionName == clientName {
			mine[c.Name] = true
		}
	}
	n := 0
	for _, ch := range chans {
		var details struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(ch.ConnectionDetails, &details) != nil {
			continue
		}
		if mine[details.Name] {
			n++
		}
	}
	return n
}
