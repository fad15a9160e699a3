package brokertest

import (
	"strings"
	"testing"
)

func TestMgmtURL(t *testing.T) {
	cases := []struct {
		amqp, mgmt, want string
	}{
		{"", "", "http://localhost:15672"},
		{"amqp://guest:guest@127.0.0.1:5674/", "", "http://127.0.0.1:15672"},
		{"amqp://guest:guest@rabbit.example:5672/v", "", "http://rabbit.example:15672"},
		{"amqp://guest:guest@[::1]:5672/", "", "http://[::1]:15672"},
		{"amqp://guest:guest@127.0.0.1:5674/", "http://127.0.0.1:15674", "http://127.0.0.1:15674"},
		{"amqp://guest:guest@127.0.0.1:5674/", "http://admin:secret@127.0.0.1:15674/", "http://127.0.0.1:15674"},
	}
	for _, c := range cases {
		t.Setenv("ACEMQ_TEST_URL", c.amqp)
		t.Setenv("ACEMQ_TEST_MGMT_URL", c.mgmt)
		if got := MgmtURL(); got != c.want {
			t.Errorf("ACEMQ_TEST_URL=%q ACEMQ_TEST_MGMT_URL=%q: MgmtURL() = %q, want %q", c.amqp, c.mgmt, got, c.want)
		}
	}
}

// On the real broker, through the delegation: ACEMQ_TEST_MGMT_URL's user
// info authenticates when it has one, else ACEMQ_TEST_URL's, and {vhost}
// is ACEMQ_TEST_URL's vhost.
func TestManagementCredentials(t *testing.T) {
	good := Require(t)
	mgmt := MgmtURL()
	var overview map[string]any
	if err := Management("overview", &overview); err != nil {
		t.Fatalf("overview with ACEMQ_TEST_URL's credentials: %v", err)
	}
	q := Queue(t, "mgmt")
	_, ch := Raw(t)
	// Durable: RabbitMQ 4.3 refuses a transient non-exclusive queue.
	if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if got := QueueDetails(t, q); got.Name != q {
		t.Errorf("queues/{vhost}/%s: name %q", q, got.Name)
	}
	const creds = "guest:guest"
	if !strings.Contains(good, "://"+creds+"@") {
		t.Skipf("ACEMQ_TEST_URL %q does not carry %s", good, creds)
	}
	t.Setenv("ACEMQ_TEST_URL", strings.Replace(good, creds, "nobody:wrong", 1))
	t.Setenv("ACEMQ_TEST_MGMT_URL", strings.Replace(mgmt, "://", "://"+creds+"@", 1))
	if got := MgmtURL(); got != mgmt {
		t.Errorf("MgmtURL() = %q; want %q, no credentials", got, mgmt)
	}
	if err := Management("overview", &overview); err != nil {
		t.Errorf("overview with ACEMQ_TEST_MGMT_URL's user info: %v", err)
	}
	t.Setenv("ACEMQ_TEST_MGMT_URL", mgmt)
	if err := Management("overview", &overview); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("overview with ACEMQ_TEST_URL's wrong credentials: %v; want 401", err)
	}
}
