package amqpx

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn counts the writes that reach a real socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// loopback is both ends of a real TCP connection on 127.0.0.1.
func loopback(t *testing.T) (client *countingConn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return &countingConn{Conn: c}, s
}

// A corked connection holds its writes and sends them in one write, in
// order, at the last uncork; uncorked, every write goes straight out; past
// corkMax it writes without waiting for the uncork.
func TestCorkConnWritesABatchAtOnce(t *testing.T) {
	raw, server := loopback(t)
	c := &CorkConn{Conn: raw}
	c.Cork()
	c.Cork() // a second writer's cork: the first uncork writes nothing
	var want bytes.Buffer
	for _, s := range []string{"method ", "header ", "body; ", "ack; "} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
		want.WriteString(s)
	}
	c.Uncork()
	if n := raw.writes.Load(); n != 0 {
		t.Fatalf("%d writes reached the socket while corked, want 0", n)
	}
	c.Uncork()
	if n := raw.writes.Load(); n != 1 {
		t.Fatalf("%d writes at the last uncork, want 1", n)
	}
	if _, err := c.Write([]byte("heartbeat")); err != nil {
		t.Fatal(err)
	}
	want.WriteString("heartbeat")
	if n := raw.writes.Load(); n != 2 {
		t.Fatalf("%d writes after an uncorked write, want 2", n)
	}
	c.Cork()
	big := bytes.Repeat([]byte{'x'}, corkMax)
	if _, err := c.Write(big); err != nil {
		t.Fatal(err)
	}
	want.Write(big)
	if n := raw.writes.Load(); n != 3 {
		t.Fatalf("%d writes after %d bytes corked, want 3 (corkMax reached)", n, corkMax)
	}
	c.Uncork()
	if n := raw.writes.Load(); n != 3 {
		t.Fatalf("%d writes after an uncork with nothing held, want 3", n)
	}
	got := make([]byte, want.Len())
	_ = server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatalf("read: %v", err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("the peer read %q…, want %q… (%d bytes)", got[:40], want.Bytes()[:40], want.Len())
	}
}

// A held write that fails closes the socket (so the connection's reader
// fails and every channel sees the loss) and fails every later write.
func TestCorkConnFailedFlushClosesTheSocket(t *testing.T) {
	raw, server := loopback(t)
	c := &CorkConn{Conn: raw}
	c.Cork()
	if _, err := c.Write([]byte("lost with the socket")); err != nil {
		t.Fatal(err)
	}
	raw.Conn.Close() // the socket fails under the corked batch
	c.Uncork()
	if _, err := c.Write([]byte("after")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after a failed flush: %v, want net.ErrClosed", err)
	}
	_ = server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := server.Read(make([]byte, 64)); err != io.EOF {
		t.Errorf("the peer read %d bytes, %v; want EOF (nothing of the lost batch)", n, err)
	}
}
