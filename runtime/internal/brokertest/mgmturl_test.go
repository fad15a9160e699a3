package brokertest

import "testing"

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

func TestMgmtRequestCredentials(t *testing.T) {
	t.Setenv("ACEMQ_TEST_URL", "amqp://alice:pw1@127.0.0.1:5674/orders")
	t.Setenv("ACEMQ_TEST_MGMT_URL", "http://127.0.0.1:15674")
	req, err := mgmtRequest("GET", "queues/{vhost}/q1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "http://127.0.0.1:15674/api/queues/orders/q1"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if u, p, _ := req.BasicAuth(); u != "alice" || p != "pw1" {
		t.Errorf("credentials from ACEMQ_TEST_URL = %q:%q, want alice:pw1", u, p)
	}
	t.Setenv("ACEMQ_TEST_MGMT_URL", "http://bob:pw2@127.0.0.1:15674")
	req, err = mgmtRequest("GET", "overview")
	if err != nil {
		t.Fatal(err)
	}
	if u, p, _ := req.BasicAuth(); u != "bob" || p != "pw2" {
		t.Errorf("credentials from ACEMQ_TEST_MGMT_URL = %q:%q, want bob:pw2", u, p)
	}
	if got, want := req.URL.String(), "http://127.0.0.1:15674/api/overview"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}
