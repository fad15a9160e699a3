package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to the test database, and can play a
// database that went down (Down: every connection cut, new ones closed at
// once) and came back (Up), without touching the shared server.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
}

// NewProxy listens on a loopback port of its own, closed at cleanup.
func NewProxy(tb testing.TB) *Proxy {
	tb.Helper()
	u, err := url.Parse(Require(tb))
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	tb.Cleanup(func() { ln.Close(); p.Down() })
	go p.serve()
	return p
}

// URL is the test database's URL through the proxy.
func (p *Proxy) URL() string {
	u, _ := url.Parse(URL())
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Down cuts every connection and closes new ones as they come.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Up forwards new connections again.
func (p *Proxy) Up() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		c.Close()
		return
	}
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
}

// track adds c to the connections Down cuts, unless the proxy is down.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		if s, ok := c.(io.Closer); ok {
			s.Close()
		}
		return false
	}
	p.conns[c] = struct{}{}
	return true
}
