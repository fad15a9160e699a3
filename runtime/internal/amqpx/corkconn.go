package amqpx

import (
	"net"
	"sync"
)

// amqp091-go writes and flushes each publish on its own (its method,
// header and body frames, then a write to the socket): a write system call
// per message, and a read per message on the broker's side. A publisher's
// writer writes everything queued each time it wakes, so it corks the
// connection for the batch (cork, uncork): the frames of the whole batch
// (and whatever else the connection writes meanwhile: acks, heartbeats,
// in order) go to the socket in one write, or one per corkMax bytes
// (bench/NOTES.md, "Issue 23"). Only a plain connection's socket is
// corked; a TLS connection is written as before.
//
// Nothing is acknowledged by a write: a publish is settled by its confirm
// alone, so a batch lost with its connection fails its publishes as any
// write lost with the channel does (the channel's loss).

// corkMax is how much a corked connection holds before it writes anyway.
const corkMax = 64 << 10

// CorkConn is the connection's socket, with writes held while corked.
type CorkConn struct {
	net.Conn
	mu    sync.Mutex
	corks int    // writers that corked it and have not uncorked yet
	buf   []byte // held while corked
	Err   error  // the first failed write: every later write fails with it
}

// Write writes p, or holds it while the connection is corked.
func (c *CorkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err != nil {
		return 0, c.Err
	}
	if c.corks > 0 || len(c.buf) > 0 {
		c.buf = append(c.buf, p...)
		if c.corks > 0 && len(c.buf) < corkMax {
			return len(p), nil
		}
		return len(p), c.flushLocked()
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.Err = err
	}
	return n, err
}

// Failed is the first failed write's error, nil while none failed.
func (c *CorkConn) Failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Err
}

// Cork holds the connection's writes until the matching uncork.
func (c *CorkConn) Cork() {
	c.mu.Lock()
	c.corks++
	c.mu.Unlock()
}

// Uncork ends a cork; the last one writes what is held.
func (c *CorkConn) Uncork() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corks--
	if c.corks == 0 && len(c.buf) > 0 && c.Err == nil {
		_ = c.flushLocked()
	}
}

// flushLocked writes what is held; c.mu is held. A failed write closes the
// socket, so that the connection's reader fails and every channel on it,
// publishes in flight included, sees the loss.
func (c *CorkConn) flushLocked() error {
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > 4*corkMax {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	if err != nil {
		c.Err = err
		_ = c.Conn.Close()
	}
	return err
}
