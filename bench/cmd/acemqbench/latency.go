package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"
)

// latencyProxy forwards TCP connections to a broker and holds every chunk
// of bytes for half the round trip in each direction, in order, so a
// broker on loopback answers as one a network hop away would (--rtt).
// Bandwidth is not limited: only latency is added, which is what makes a
// confirm that is waited for cost more than one that is pipelined.
type latencyProxy struct {
	ln     net.Listener
	target string
	oneWay time.Duration

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startLatencyProxy listens on a free loopback port and forwards to target
// (host:port) with rtt/2 added in each direction.
func startLatencyProxy(target string, rtt time.Duration) (*latencyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("latency proxy: %w", err)
	}
	p := &latencyProxy{ln: ln, target: target, oneWay: rtt / 2}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// addr is the proxy's host:port.
func (p *latencyProxy) addr() string { return p.ln.Addr().String() }

// close stops accepting, closes every forwarded connection and waits for
// the forwarding goroutines.
func (p *latencyProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *latencyProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.forward(server, client)
		go p.forward(client, server)
	}
}

// chunk is bytes read at one moment, due to be written oneWay later.
type chunk struct {
	data []byte
	due  time.Time
}

// forward copies src to dst, each chunk written no earlier than oneWay
// after it was read. A reader and a writer goroutine, so reading goes on
// while earlier chunks wait: latency is added, throughput is not cut.
func (p *latencyProxy) forward(dst, src net.Conn) {
	defer p.wg.Done()
	queue := make(chan chunk, 1<<14)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.data); err != nil {
				_ = src.Close()
				for range queue { // drain so the reader is not stuck
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			queue <- chunk{data: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.oneWay)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				_ = dst.Close()
			}
			break
		}
	}
	close(queue)
	<-done
}

// viaProxy returns the AMQP URL with its host and port replaced by addr.
func viaProxy(amqpURL, addr string) (string, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return "", fmt.Errorf("--url: %w", err)
	}
	u.Host = addr
	return u.String(), nil
}

// brokerAddr is the URL's host:port, with AMQP's default port when the URL
// names none.
func brokerAddr(amqpURL string) (string, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return "", fmt.Errorf("--url: %w", err)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "5672"
	if u.Scheme == "amqps" {
		port = "5671"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
