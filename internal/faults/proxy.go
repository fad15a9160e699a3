package faults

import (
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy between the client and the node, on an ephemeral
// port, that can stall its connections silently (bytes stop flowing both
// ways, the sockets stay open: a network that drops packets) or cut them
// (closed at once). New connections after a stall flow normally.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	pairs map[*pair]struct{}
	wg    sync.WaitGroup
}

type pair struct {
	client, server net.Conn
	stalled        chan struct{} // closed when the pair stalls
	once           sync.Once
}

// NewProxy listens on 127.0.0.1:0 and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, pairs: map[*pair]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		pr := &pair{client: c, server: s, stalled: make(chan struct{})}
		p.mu.Lock()
		p.pairs[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pump(pr, s, c)
		go p.pump(pr, c, s)
	}
}

// pump copies from src to dst until either closes; once the pair stalls it
// reads nothing more (the kernel buffers fill, the peer sees silence).
func (p *Proxy) pump(pr *pair, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		select {
		case <-pr.stalled:
			<-pr.closedOrForever(p)
			return
		default:
		}
		_ = src.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-pr.stalled:
				// Stalled mid-read: drop the bytes, as the network would.
				continue
			default:
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.drop(pr)
				return
			}
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			if err != io.EOF {
				p.drop(pr)
				return
			}
			p.drop(pr)
			return
		}
	}
}

// closedOrForever returns a channel closed when the pair is dropped (by
// Cut or Close).
func (pr *pair) closedOrForever(p *Proxy) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for {
			p.mu.Lock()
			_, alive := p.pairs[pr]
			p.mu.Unlock()
			if !alive {
				close(done)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return done
}

func (p *Proxy) drop(pr *pair) {
	p.mu.Lock()
	delete(p.pairs, pr)
	p.mu.Unlock()
	pr.client.Close()
	pr.server.Close()
}

// Stall stops every connection open now, silently, and returns how many.
func (p *Proxy) Stall() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.pairs {
		pr.once.Do(func() { close(pr.stalled) })
	}
	return len(p.pairs)
}

// Cut closes every connection open now, and returns how many.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	prs := make([]*pair, 0, len(p.pairs))
	for pr := range p.pairs {
		prs = append(prs, pr)
	}
	p.mu.Unlock()
	for _, pr := range prs {
		p.drop(pr)
	}
	return len(prs)
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}
