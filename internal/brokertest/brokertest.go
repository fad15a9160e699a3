// Package brokertest gives the root module's tests a real RabbitMQ. The
// broker's URL, its management API and their credentials, the connection
// check, unique names and queues of a test's own are runtime/acemqtest's
// (URL, MgmtURL, Require, Name, Queue, Management: one implementation,
// runtime/internal/brokertest, behind the public one); this package adds
// only what the project's tests need besides: reading queues and bindings
// back, and a plain amqp091 connection.
//
// Require skips under -short without dialling (the broker-free quick
// test), fails under CI=true when no broker answers, and skips elsewhere.
package brokertest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/acemqtest"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// URL is the broker the tests use: ACEMQ_TEST_URL, or acemqtest.DefaultURL.
func URL() string { return acemqtest.URL() }

// MgmtURL is the management API the tests read the broker through (see
// acemqtest.MgmtURL): never with a trailing slash, never with credentials.
func MgmtURL() string { return acemqtest.MgmtURL() }

// Require returns URL once the broker answers (see acemqtest.Require).
func Require(tb testing.TB) string {
	tb.Helper()
	return acemqtest.Require(tb)
}

// Name is a unique name with the given prefix (see acemqtest.Name).
func Name(prefix string) string { return acemqtest.Name(prefix) }

// Queue is a queue name of the test's own, deleted with every queue named
// after it when the test ends (see acemqtest.Queue).
func Queue(tb testing.TB, prefix string) string {
	tb.Helper()
	return acemqtest.Queue(tb, prefix)
}

// Management GETs the management API path (relative to /api/; {vhost}
// stands for the test vhost, path-escaped) and decodes its JSON into v.
func Management(path string, v any) error {
	return acemqtest.Management(http.MethodGet, path, nil, v)
}

// ManagementSend sends body (JSON-encoded; nil for none) with method to
// the management API path (as Management): PUT vhosts/x, POST
// definitions/x, DELETE ... Any answer but a 2xx is an error carrying the
// broker's reason.
func ManagementSend(method, path string, body any) error {
	return acemqtest.Management(method, path, body, nil)
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

// DeleteQueues deletes q and every queue named q.<something> (as Queue's
// cleanup does, for a queue a test did not get from Queue).
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
