package faults

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP proxy between the client and the node, on an ephemeral
// port, that can stall its connections silently (bytes stop flowing both
// ways, the sockets stay open: a network that drops packets), stop passing
// what the client sends (a broker that stops reading; its heartbeats and
// replies already sent still arrive), or cut them (closed at once). New
// connections after a stall flow normally.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	pairs map[*pair]struct{}
	// at, when set, stops every pair's client→broker bytes at the
	// Nth frame carrying that method (StallToBrokerAt).
	at *methodTrigger
	// resetUntil: a connection accepted before it is reset at once (an
	// endpoint with no broker behind it, a broker starting up); resets
	// counts them.
	resetUntil time.Time
	resets     int
	wg         sync.WaitGroup
}

type pair struct {
	client, server net.Conn
	stalled        chan struct{} // closed when the pair stalls
	once           sync.Once
	// upStalled is closed when the client→broker bytes stop.
	upStalled chan struct{}
	upOnce    sync.Once
	// frames follows the client→broker frames, for StallToBrokerAt.
	frames frameScanner
}

// Method is an AMQP method by its class and method ids (AMQP 0-9-1,
// section 1.4): {20, 10} is channel.open.
type Method struct{ Class, ID uint16 }

// The methods the fault suite stops the client at.
var (
	ConnectionClose = Method{10, 50}
	ChannelOpen     = Method{20, 10}
	ChannelClose    = Method{20, 40}
	ExchangeDeclare = Method{40, 10}
	QueueDeclare    = Method{50, 10}
	QueueBind       = Method{50, 20}
	BasicQos        = Method{60, 10}
	BasicConsume    = Method{60, 20}
	BasicCancel     = Method{60, 30}
	BasicPublish    = Method{60, 40}
	BasicGet        = Method{60, 70}
	ConfirmSelect   = Method{85, 10}
)

const (
	methodFrameType  byte = 1
	frameHeaderBytes      = 7 // type, channel, size
)

func (m Method) String() string {
	names := map[Method]string{
		ConnectionClose: "connection.close", ChannelOpen: "channel.open", ChannelClose: "channel.close",
		ExchangeDeclare: "exchange.declare", QueueDeclare: "queue.declare", QueueBind: "queue.bind",
		BasicQos: "basic.qos", BasicConsume: "basic.consume", BasicCancel: "basic.cancel",
		BasicPublish: "basic.publish", BasicGet: "basic.get", ConfirmSelect: "confirm.select",
	}
	if n, ok := names[m]; ok {
		return n
	}
	return fmt.Sprintf("method %d.%d", m.Class, m.ID)
}

// methodTrigger counts down the frames carrying one method, over every
// pair of the proxy.
type methodTrigger struct {
	m    Method
	left int
	hit  chan struct{} // closed when the trigger fired
	// channel: only that frame's channel stops (StallChannelAt).
	channel bool
}

// verdict is what the proxy does with a client frame.
type verdict int

const (
	pass     verdict = iota
	stallAll         // this frame and everything after it stay
	hold             // this frame and every later one of its channel stay
)

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
		p.mu.Lock()
		reset := time.Now().Before(p.resetUntil)
		if reset {
			p.resets++
		}
		p.mu.Unlock()
		if reset {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // RST, not FIN
			}
			c.Close()
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		pr := &pair{client: c, server: s, stalled: make(chan struct{}), upStalled: make(chan struct{})}
		p.mu.Lock()
		p.pairs[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pump(pr, s, c)
		go p.pump(pr, c, s)
	}
}

// pump copies from src to dst until either closes; once the pair stalls
// (or, for the client→broker direction up, its client's bytes stop) it
// reads nothing more (the kernel buffers fill, the peer sees silence).
func (p *Proxy) pump(pr *pair, dst, src net.Conn) {
	defer p.wg.Done()
	up := src == pr.client
	buf := make([]byte, 32<<10)
	for {
		if pr.stopped(up) {
			<-pr.closedOrForever(p)
			return
		}
		_ = src.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := src.Read(buf)
		if n > 0 {
			out, hit := buf[:n], false
			if up {
				if out, hit = pr.frames.feed(out, p.fires); hit {
					// What came before the method goes; it and the rest stay.
					pr.upOnce.Do(func() { close(pr.upStalled) })
				}
			}
			if !hit && pr.stopped(up) {
				// Stalled mid-read: drop the bytes, as the network would.
				continue
			}
			if _, werr := dst.Write(out); werr != nil {
				p.drop(pr)
				return
			}
		}
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			p.drop(pr)
			return
		}
	}
}

// stopped says whether the pump of one direction must stop reading.
func (pr *pair) stopped(up bool) bool {
	select {
	case <-pr.stalled:
		return true
	default:
	}
	if !up {
		return false
	}
	select {
	case <-pr.upStalled:
		return true
	default:
		return false
	}
}

// fires counts a client frame carrying m against the armed trigger and
// says what to do with it.
func (p *Proxy) fires(m Method) verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at == nil || p.at.m != m {
		return pass
	}
	if p.at.left--; p.at.left > 0 {
		return pass
	}
	close(p.at.hit)
	v := stallAll
	if p.at.channel {
		v = hold
	}
	p.at = nil
	return v
}

// frameScanner follows AMQP frames in the client's bytes (the protocol
// header, then frames: type, channel, size, payload, frame end), holding
// back the first bytes of each frame until its method is known.
type frameScanner struct {
	proto int    // protocol header bytes seen (8 in all)
	head  []byte // the current frame's first bytes, while undecided
	left  int    // bytes of the current frame still to pass (or drop)
	drop  bool   // the current frame's bytes are withheld
	held  map[uint16]bool
}

// feed takes the client's next bytes and returns those to pass on, up to
// the first method frame stop says to stall at (hit: that frame and what
// follows are withheld); the frames of a channel stop says to hold are
// withheld, the others pass.
func (f *frameScanner) feed(b []byte, stop func(Method) verdict) (out []byte, hit bool) {
	for len(b) > 0 {
		var n int
		switch {
		case f.proto < 8:
			n = min(8-f.proto, len(b))
			f.proto += n
			out = append(out, b[:n]...)
		case f.left > 0:
			n = min(f.left, len(b))
			f.left -= n
			if !f.drop {
				out = append(out, b[:n]...)
			}
		default:
			want := frameHeaderBytes
			if f.isMethod() {
				want += 4 // class and method ids
			}
			n = min(want-len(f.head), len(b))
			f.head = append(f.head, b[:n]...)
			if len(f.head) < want || (want == frameHeaderBytes && f.isMethod()) {
				break // more bytes to come: the ids, or the rest of the header
			}
			v := pass
			if want > frameHeaderBytes {
				v = stop(Method{binary.BigEndian.Uint16(f.head[7:9]), binary.BigEndian.Uint16(f.head[9:11])})
			}
			channel := binary.BigEndian.Uint16(f.head[1:3])
			switch v {
			case stallAll:
				return out, true
			case hold:
				if f.held == nil {
					f.held = map[uint16]bool{}
				}
				f.held[channel] = true
			}
			f.drop = f.held[channel]
			if !f.drop {
				out = append(out, f.head...)
			}
			f.left = frameHeaderBytes + f.size() + 1 - len(f.head)
			f.head = f.head[:0]
		}
		b = b[n:]
	}
	return out, false
}

// isMethod says whether the current frame's header is in and it is a
// method frame (with room for its ids).
func (f *frameScanner) isMethod() bool {
	return len(f.head) >= frameHeaderBytes && f.head[0] == methodFrameType && f.size() >= 4
}

func (f *frameScanner) size() int { return int(binary.BigEndian.Uint32(f.head[3:7])) }

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

// StallToBroker stops passing what the client sends on every connection
// open now (what the broker sends still arrives: its heartbeats, its
// replies already on their way), and returns how many.
func (p *Proxy) StallToBroker() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.pairs {
		pr.upOnce.Do(func() { close(pr.upStalled) })
	}
	return len(p.pairs)
}

// StallToBrokerAt arms the proxy: the nth frame the client sends from now
// on carrying method m (on any connection), and everything the client
// sends after it on that connection, are not passed to the broker; the
// broker's bytes still arrive. The channel returned is closed when it
// happens.
func (p *Proxy) StallToBrokerAt(m Method, nth int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = &methodTrigger{m: m, left: max(nth, 1), hit: make(chan struct{})}
	return p.at.hit
}

// StallChannelAt arms the proxy as StallToBrokerAt does, but what stops
// is the channel of that frame only: it and every later frame of its
// channel are not passed, the connection's other channels and its
// heartbeats flow on (a broker that does not answer one channel).
func (p *Proxy) StallChannelAt(m Method, nth int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.at = &methodTrigger{m: m, left: max(nth, 1), hit: make(chan struct{}), channel: true}
	return p.at.hit
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

// ResetFor makes the proxy accept and reset (RST) every new connection
// for d, as an endpoint with no broker behind it does, then forward again;
// it cuts the connections open now and returns how many.
func (p *Proxy) ResetFor(d time.Duration) int {
	p.mu.Lock()
	p.resetUntil = time.Now().Add(d)
	p.mu.Unlock()
	return p.Cut()
}

// Resets is how many connections ResetFor reset.
func (p *Proxy) Resets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}
