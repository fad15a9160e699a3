package acemqtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// On the real broker: the management API's credentials are
// ACEMQ_TEST_MGMT_URL's user info when it has one, else ACEMQ_TEST_URL's,
// and MgmtURL never carries them.
func TestManagementCredentials(t *testing.T) {
	good := acemqtest.Require(t)
	mgmt := acemqtest.MgmtURL()
	var overview struct {
		RabbitMQVersion string `json:"rabbitmq_version"`
	}
	if err := acemqtest.Management(http.MethodGet, "overview", nil, &overview); err != nil || overview.RabbitMQVersion == "" {
		t.Fatalf("overview with ACEMQ_TEST_URL's credentials: %v (version %q)", err, overview.RabbitMQVersion)
	}
	// ACEMQ_TEST_URL names no user the broker knows: the management URL's
	// own user info is what authenticates.
	withUser := strings.Replace(mgmt, "://", "://"+userInfo(t, good)+"@", 1)
	t.Setenv("ACEMQ_TEST_URL", strings.Replace(good, "://"+userInfo(t, good)+"@", "://nobody:wrong@", 1))
	t.Setenv("ACEMQ_TEST_MGMT_URL", withUser)
	if got := acemqtest.MgmtURL(); got != mgmt || strings.Contains(got, "@") {
		t.Errorf("MgmtURL() = %q with ACEMQ_TEST_MGMT_URL=%q; want %q, no credentials", got, withUser, mgmt)
	}
	if err := acemqtest.Management(http.MethodGet, "overview", nil, nil); err != nil {
		t.Errorf("overview with ACEMQ_TEST_MGMT_URL's user info: %v", err)
	}
	// Without it, ACEMQ_TEST_URL's (wrong) credentials are used: refused.
	t.Setenv("ACEMQ_TEST_MGMT_URL", mgmt)
	err := acemqtest.Management(http.MethodGet, "overview", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("overview with ACEMQ_TEST_URL's wrong credentials: %v; want 401", err)
	}
}

// userInfo is the "user:password" of an AMQP URL.
func userInfo(t *testing.T, amqpURL string) string {
	t.Helper()
	_, rest, ok := strings.Cut(amqpURL, "://")
	at := strings.LastIndex(rest, "@")
	if !ok || at < 0 {
		t.Skipf("ACEMQ_TEST_URL %q has no credentials to move", amqpURL)
	}
	return rest[:at]
}
