package main

import (
	"net/url"
	"testing"

	"github.com/acemq/acemq-go/internal/brokertest"
)

// ownVhost gives the test a vhost of its own on the test broker (guest may
// use it), deleted at the end, and returns the broker URL pointing at it:
// every run purges the bench queues it declares, so two runs sharing a
// vhost (a developer's acemqbench beside `make test`) spoil each other.
func ownVhost(t *testing.T) string {
	t.Helper()
	base := brokertest.Require(t)
	name := brokertest.Name("acemqbench")
	if err := brokertest.ManagementSend("PUT", "vhosts/"+url.PathEscape(name), nil); err != nil {
		t.Fatalf("create vhost %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := brokertest.ManagementSend("DELETE", "vhosts/"+url.PathEscape(name), nil); err != nil {
			t.Errorf("delete vhost %s: %v", name, err)
		}
	})
	perm := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	if err := brokertest.ManagementSend("PUT", "permissions/"+url.PathEscape(name)+"/"+url.PathEscape(user), perm); err != nil {
		t.Fatalf("permissions on %s: %v", name, err)
	}
	u.Path = "/" + name
	u.RawPath = "/" + url.PathEscape(name)
	return u.String()
}
