package acemqtest

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
)

// DefaultURL is the broker used when ACEMQ_TEST_URL is not set.
const DefaultURL = brokertest.DefaultURL

// URL is the broker tests use: ACEMQ_TEST_URL, or DefaultURL.
func URL() string { return brokertest.URL() }

// MgmtURL is the broker's management API: ACEMQ_TEST_MGMT_URL, or http on
// URL's host, port 15672. It never ends with a slash and never carries
// credentials: Management authenticates with ACEMQ_TEST_MGMT_URL's user
// info when it has one, else with URL's.
func MgmtURL() string { return brokertest.MgmtURL() }

// ErrNoManagement matches the error of Management (and so the failure of
// VHost and DialVHost) when nothing answers on the management API's port:
// a RabbitMQ without its management plugin. The error names the plugin and
// the command that enables it, `rabbitmq-plugins enable rabbitmq_management`.
var ErrNoManagement = brokertest.ErrNoManagement

// Management calls the broker's management API (see MgmtURL): method on
// path, relative to /api/ ({vhost} stands for URL's virtual host,
// path-escaped: "queues/{vhost}/orders.new"), body (when not nil) sent as
// JSON, the answer decoded into out (when not nil). Any answer but a 2xx
// is an error carrying the broker's reason.
func Management(method, path string, body, out any) error {
	return brokertest.ManagementCall(method, path, body, out)
}

// Require returns URL once the broker answers on its port. A broker that
// does not answer skips the test, or fails it when CI=true. Under
// go test -short the test is skipped without trying, CI=true or not: -short
// asks for the tests that need no broker.
func Require(tb testing.TB) string {
	tb.Helper()
	return brokertest.Require(tb)
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
	// Queue's cleanup closes it before it deletes the queues: cleanups run
	// last-registered first, and a consumer still open when its queue goes
	// resubscribes, declaring q.dlq and q.parked again (seen on RabbitMQ
	// 4.0). Close is idempotent: closing it again here is harmless.
	brokertest.CloseBeforeCleanup(tb, closeIt)
	tb.Cleanup(closeIt)
	return c
}

// Name is a unique name with the given prefix, safe for a queue, an
// exchange or a vhost: "test.<prefix>.<8 hex digits>".
func Name(prefix string) string { return brokertest.Name(prefix) }

// Queue is a queue name of the test's own. When the test ends, the queue
// and every queue named after it (q.dlq, q.parked, q.retry.<N>s) are
// deleted (after the connections Dial opened for the test are closed, so no
// consumer of theirs declares them again); the rungs are found through the
// management API when it answers.
func Queue(tb testing.TB, prefix string) string {
	tb.Helper()
	return brokertest.Queue(tb, prefix)
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
	if err := Management(http.MethodPut, path, map[string]any{}, nil); err != nil {
		tb.Fatalf("acemqtest: create vhost %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = Management(http.MethodDelete, path, nil, nil) })
	perms := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	if err := Management(http.MethodPut, "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(u.User.Username()), perms, nil); err != nil {
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
