package runtime

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// silenceConn closes a connection from which nothing has been read for two
// heartbeats. A network that stalls silently (packets dropped, no reset)
// otherwise goes unnoticed until amqp091-go's own read deadline, three
// heartbeats, or the kernel's TCP timeouts when heartbeats are off. The
// broker sends a heartbeat every half of the negotiated interval when
// nothing else flows, so a healthy connection is never this quiet.
type silenceConn struct {
	net.Conn
	last atomic.Int64 // UnixNano of the last read that returned bytes
	done chan struct{}
	once sync.Once
}

// watchSilence wraps conn with a watchdog for heartbeat (none when it is 0).
func watchSilence(conn net.Conn, heartbeat time.Duration) net.Conn {
	if heartbeat <= 0 {
		return conn
	}
	w := &silenceConn{Conn: conn, done: make(chan struct{})}
	w.last.Store(time.Now().UnixNano())
	limit := 2 * heartbeat
	go func() {
		t := time.NewTicker(heartbeat / 4)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case now := <-t.C:
				if now.Sub(time.Unix(0, w.last.Load())) > limit {
					// amqp091-go's reader fails and the connection shuts
					// down; the next call of the runtime reconnects.
					_ = w.Close()
					return
				}
			}
		}
	}()
	return w
}

func (w *silenceConn) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if n > 0 {
		w.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (w *silenceConn) Close() error {
	w.once.Do(func() { close(w.done) })
	return w.Conn.Close()
}

// effectiveHeartbeat is what amqp091-go will ask for: it speaks whole
// seconds, and 0 would switch heartbeats off.
func effectiveHeartbeat(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return max(time.Second, d.Truncate(time.Second))
}
