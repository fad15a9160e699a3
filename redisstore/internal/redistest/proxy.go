package redistest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy stands between a test and the test Redis: it forwards each TCP
// connection, and Cut plays an outage (every connection closed, new ones
// refused by closing them at once) until Restore, so that an outage is
// tested without stopping the shared Redis.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	open  map[net.Conn]struct{}
	conns int // connections forwarded so far
}

// NewProxy forwards a loopback port of its own to Require's Redis; it is
// closed at cleanup.
func NewProxy(tb testing.TB) *Proxy {
	tb.Helper()
	target := Require(tb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, open: map[net.Conn]struct{}{}}
	tb.Cleanup(func() {
		_ = ln.Close()
		p.Cut()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
	return p
}

// Addr is the proxy's address, for redis.Options.Addr.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every forwarded connection and every new one until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.open {
		_ = c.Close()
	}
	clear(p.open)
}

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Conns is how many connections the proxy forwarded.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

func (p *Proxy) pipe(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.open[client], p.open[server] = struct{}{}, struct{}{}
	p.conns++
	p.mu.Unlock()
	go func() {
		_, _ = io.Copy(server, client)
		_ = server.Close()
	}()
	_, _ = io.Copy(client, server)
	_ = client.Close()
}
