package drain_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acemq/acemq-go/drain"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// With the management plugin off nothing answers on its port: Check says
// which plugin and how to enable it, and the error matches
// ErrNoManagement (the cause, connection refused, is kept).
func TestCheckWithoutManagement(t *testing.T) {
	endpoint := "http://" + closedPort(t)
	c, err := rabbithole.NewClient(endpoint, "guest", "guest")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = drain.Check(ctx, c, "/", "orders.new", drain.Options{})
	var nm *drain.NoManagementError
	if !errors.Is(err, drain.ErrNoManagement) || !errors.As(err, &nm) || nm.Endpoint != endpoint || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Check: %v, want it to match drain.ErrNoManagement, a *NoManagementError at %s, ECONNREFUSED", err, endpoint)
	}
	for _, want := range []string{endpoint, "rabbitmq_management", "rabbitmq-plugins enable rabbitmq_management", "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check: %v, want it to name %q", err, want)
		}
	}
}
