package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The states of a Connection (ConnectionState.State).
const (
	StateConnected    = "connected"
	StateBlocked      = "blocked"      // by a broker resource alarm (connection.blocked)
	StateReconnecting = "reconnecting" // the connection was lost; the next call, or a consumer, dials again
	StateClosed       = "closed"       // Close was called
)

// ConnectionState is what Connection.State reports.
type ConnectionState struct {
	State string `json:"state"`
	// Address is the broker in use, or last used (password redacted).
	Address string `json:"address"`
	// Since is when the connection entered State.
	Since time.Time `json:"since,omitzero"`
	// BlockedReason is the broker's reason while State is blocked ("low on
	// memory", "low on disk").
	BlockedReason string `json:"blocked_reason,omitempty"`
	// LastError is why the connection was lost, or why the last dial
	// failed, while State is reconnecting.
	LastError string `json:"last_error,omitempty"`
}

// connHealth is the bookkeeping behind State; Connection.mu guards it.
type connHealth struct {
	since   time.Time // of the current state
	lostAt  time.Time // when the live connection was lost (zero while up)
	lastErr error
}

func (h *connHealth) failed(err error) {
	if h.lostAt.IsZero() {
		h.lostAt = time.Now()
	}
	h.lastErr = err
}

// lost records that conn closed (the broker or the network ended it),
// with amqp091-go's reason when it gave one.
func (c *Connection) lost(conn *amqp.Connection, closes <-chan *amqp.Error) {
	var reason error = errors.New("connection closed")
	select {
	case e, ok := <-closes:
		if ok && e != nil {
			reason = e
		}
	case <-time.After(100 * time.Millisecond):
	}
	c.forgetSocket(conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == conn || c.conn == nil {
		c.health.lostAt = time.Now()
		c.health.since = c.health.lostAt
		c.health.lastErr = reason
	}
}

// State says whether the connection is up: connected, blocked by the
// broker (with its reason), reconnecting (since when, and the last error),
// or closed. It asks the broker nothing.
func (c *Connection) State() ConnectionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ConnectionState{Address: c.addrs[c.current].redacted, Since: c.health.since}
	up := c.conn != nil && !c.conn.IsClosed()
	switch {
	case c.closed:
		st.State = StateClosed
	case up && c.blocked:
		st.State, st.BlockedReason = StateBlocked, c.blockedReason
	case up:
		st.State = StateConnected
	default:
		st.State = StateReconnecting
		if !c.health.lostAt.IsZero() {
			st.Since = c.health.lostAt
		}
		if c.health.lastErr != nil {
			st.LastError = c.health.lastErr.Error()
		} else {
			st.LastError = "connection closed"
		}
	}
	return st
}

// Ready is nil while the connection is connected: a readiness probe's
// question. Otherwise its error matches ErrBlocked (and ErrUnavailable)
// while the broker blocks the connection, ErrUnavailable while it
// reconnects, ErrClosed once closed.
func (c *Connection) Ready() error {
	st := c.State()
	switch st.State {
	case StateConnected:
		return nil
	case StateBlocked:
		return fmt.Errorf("%s: %w", c.redacted, &blockedError{reason: st.BlockedReason})
	case StateClosed:
		return ErrClosed
	}
	return fmt.Errorf("%s: reconnecting since %s: %s: %w", c.redacted, st.Since.Format(time.RFC3339), st.LastError, ErrUnavailable)
}

// Health is what HealthHandler serves.
type Health struct {
	// Status is "ok" when the connection is Ready, every consumer is
	// consuming and every check is ready, else "unavailable".
	Status     string          `json:"status"`
	Connection ConnectionState `json:"connection"`
	Consumers  []ConsumerStats `json:"consumers,omitempty"`
	Checks     []CheckState    `json:"checks,omitempty"`
}

// A HealthPart is what HealthHandler reports on beside the connection: a
// *Consumer, or a Check.
type HealthPart interface{ healthPart() }

func (*Consumer) healthPart() {}

// Check is a dependency other than the broker that a readiness probe asks
// about: a database the handlers write to (pgstore's Inbox.Check), a
// service they call. Ready is nil while it is available; HealthHandler
// calls it with the request's context, bounded by checkTimeout.
type Check struct {
	Name  string
	Ready func(ctx context.Context) error
}

func (Check) healthPart() {}

// CheckState is a Check as HealthHandler found it.
type CheckState struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// Error is why it is not ready.
	Error string `json:"error,omitempty"`
}

// checkTimeout bounds a Check's Ready: a dependency that does not answer
// within it is not ready.
const checkTimeout = 2 * time.Second

// HealthHandler serves conn's State, each consumer's Stats and each
// check's state as JSON (Health), with 200 while conn is Ready, every
// consumer is consuming and every Check is ready, else 503: mount it where
// a readiness probe looks (http.Handle("/readyz", runtime.HealthHandler(conn,
// orders, inbox.Check()))).
func HealthHandler(conn *Connection, parts ...HealthPart) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := Health{Status: "ok", Connection: conn.State()}
		if conn.Ready() != nil {
			h.Status = "unavailable"
		}
		for _, p := range parts {
			switch p := p.(type) {
			case *Consumer:
				st := p.Stats()
				if st.State != ConsumerConsuming {
					h.Status = "unavailable"
				}
				h.Consumers = append(h.Consumers, st)
			case Check:
				cs := CheckState{Name: p.Name, Ready: true}
				if p.Ready != nil {
					ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
					if err := p.Ready(ctx); err != nil {
						cs.Ready, cs.Error, h.Status = false, err.Error(), "unavailable"
					}
					cancel()
				}
				h.Checks = append(h.Checks, cs)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if h.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
}
