package acemqtest_test

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// With the management plugin off nothing answers on its port: Management
// (and so VHost and DialVHost, which fail the test with its error) names
// the plugin and the command that enables it, and the error matches
// ErrNoManagement and keeps its cause.
func TestManagementPluginOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mgmt := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("ACEMQ_TEST_MGMT_URL", mgmt)
	err = acemqtest.Management(http.MethodGet, "overview", nil, nil)
	if !errors.Is(err, acemqtest.ErrNoManagement) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Management: %v, want it to match acemqtest.ErrNoManagement and ECONNREFUSED", err)
	}
	for _, want := range []string{mgmt, "rabbitmq_management", "rabbitmq-plugins enable rabbitmq_management", "ACEMQ_TEST_MGMT_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Management: %v, want it to name %q", err, want)
		}
	}
}

// DialVHost against a broker whose management API does not answer fails
// the test naming the plugin and the command, not only "connection
// refused" on port 15672.
func TestDialVHostWithoutManagement(t *testing.T) {
	acemqtest.Require(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mgmt := "http://" + ln.Addr().String()
	ln.Close()
	t.Setenv("ACEMQ_TEST_MGMT_URL", mgmt)
	r := ended(t, func(tb testing.TB) { acemqtest.DialVHost(tb) })
	if !strings.Contains(r.failed, "rabbitmq-plugins enable rabbitmq_management") || !strings.Contains(r.failed, mgmt) {
		t.Errorf("DialVHost failed the test with %q, want it to name %s and `rabbitmq-plugins enable rabbitmq_management`", r.failed, mgmt)
	}
}
