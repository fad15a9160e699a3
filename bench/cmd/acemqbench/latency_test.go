package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers every connection with what it receives.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestLatencyProxyHoldsEachWay checks the proxy's two promises: a round
// trip takes at least the rtt (a lower bound, which sleeping guarantees, so
// the test cannot flake on a slow machine), and a megabyte of random bytes
// comes back whole and in order.
func TestLatencyProxyHoldsEachWay(t *testing.T) {
	const rtt = 40 * time.Millisecond
	p, err := startLatencyProxy(echoServer(t), rtt)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	one := make([]byte, 1)
	if _, err := io.ReadFull(c, one); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < rtt {
		t.Errorf("a round trip through the proxy took %v, want at least %v", took, rtt)
	}

	want := make([]byte, 1<<20)
	_, _ = rand.Read(want)
	go func() { _, _ = c.Write(want) }()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the megabyte came back changed or out of order")
	}
}

func TestViaProxyKeepsCredentialsAndVhost(t *testing.T) {
	got, err := viaProxy("amqp://u:p@broker.example:5672/orders", "127.0.0.1:4000")
	if err != nil {
		t.Fatal(err)
	}
	if want := "amqp://u:p@127.0.0.1:4000/orders"; got != want {
		t.Errorf("viaProxy = %q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"amqp://localhost/":        "localhost:5672",
		"amqps://h/":               "h:5671",
		"amqp://guest@[::1]:5673/": "[::1]:5673",
	} {
		if got, err := brokerAddr(in); err != nil || got != want {
			t.Errorf("brokerAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestRunThroughTheProxy runs P2 once through the proxy against the test
// broker and checks the table says how it was made.
func TestRunThroughTheProxy(t *testing.T) {
	url := ownVhost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, options{url: url, n: 40, pairs: 1, body: "100", cases: "^P2$", rtt: 2 * time.Millisecond}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"P2 ", "a 2ms round trip (--rtt)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}
