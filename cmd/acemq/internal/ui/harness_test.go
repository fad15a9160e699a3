package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/bodies"
	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The shop the tests run: one queue of orders (JSON Schema) whose
// consumer rejects an order without a customer, parks one that asks for
// a person, and rejects every order while the warehouse is down.
const orderSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["order_id", "quantity"],
  "properties": {
    "order_id": {"type": "string"},
    "quantity": {"type": "integer", "minimum": 1},
    "customer": {"type": "string", "minLength": 1},
    "note": {"type": "string"},
    "comment": {"type": "string"}
  }
}`

const manifestText = `version: 1
package: shop
messages:
  OrderPlaced: {type: order.placed.v1, schema: order.json}
  Refund: {type: refund.v1, schema: refund.avsc, subject: refund}
exchanges:
  $Q.ex: {type: topic}
queues:
  $Q.orders:
    dead_letter: true
    bindings: [{exchange: $Q.ex, routing_key: order.placed}]
    consumes: [OrderPlaced]
  $Q.refunds:
    consumes: [Refund]
`

const refundSchema = `{"type": "record", "name": "Refund", "namespace": "shop", "fields": [
  {"name": "refund_id", "type": "string"},
  {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
  {"name": "reason", "type": ["null", "string"], "default": null},
  {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["FULL", "PARTIAL"]}}
]}`

// The token the tests sign in with, and its holder's name.
const (
	testToken = "s3cret-token-0123456789"
	testName  = "alice"
)

// A message with script tags in a header, its reason and its body.
const scriptID = `<script>alert("x")</script>`

type order = map[string]any

var orderType = runtime.NewJSONType[order]("order.placed.v1", orderSchema)

type shop struct {
	t        testing.TB
	q        string // the queue names' prefix
	dir      string
	file     string
	orders   string // $Q.orders
	url      string
	conn     *runtime.Connection
	consumer *runtime.Consumer
	down     atomic.Bool // the warehouse is down
	received chan *runtime.Message[order]

	srv    *Server
	base   string // http://127.0.0.1:port
	cancel context.CancelFunc
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newShop declares the manifest's topology on the broker under queue
// names of the test's own and starts the consumer.
func newShop(t testing.TB) *shop {
	t.Helper()
	url := brokertest.Require(t)
	q := brokertest.Name("ui")
	dir := t.TempDir()
	s := &shop{t: t, q: q, dir: dir, file: filepath.Join(dir, "acemq.yaml"), orders: q + ".orders", url: url,
		received: make(chan *runtime.Message[order], 100)}
	must(t, os.WriteFile(s.file, []byte(strings.ReplaceAll(manifestText, "$Q", q)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "order.json"), []byte(orderSchema), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "refund.avsc"), []byte(refundSchema), 0o644))
	t.Cleanup(func() {
		brokertest.DeleteQueues(t, q)
		if conn, err := amqp.Dial(url); err == nil {
			if ch, err := conn.Channel(); err == nil {
				_ = ch.ExchangeDelete(q+".ex", false, false)
			}
			conn.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := runtime.Dial(ctx, url, runtime.WithOrigin("shop@test"), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	must(t, err)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	s.conn = c
	m, err := topo.Load(s.file)
	must(t, err)
	must(t, c.Declare(ctx, topo.Topology(m)))
	s.startConsumer()
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (s *shop) handle(_ context.Context, m *runtime.Message[order]) runtime.Ack {
	id, _ := m.Payload["order_id"].(string)
	if note, _ := m.Payload["note"].(string); note == "park" {
		return runtime.Park(fmt.Errorf("order %s asks for a person", id))
	}
	if _, ok := m.Payload["customer"]; !ok {
		return runtime.Reject(fmt.Errorf("order %s has no customer", id))
	}
	if s.down.Load() {
		return runtime.Reject(fmt.Errorf("warehouse %q is not answering for order %s", "north-"+id[len(id)-1:], id))
	}
	s.received <- m
	return runtime.Accept()
}

func (s *shop) startConsumer() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := runtime.Consume(ctx, s.conn, runtime.ConsumerSpec{Queue: s.orders,
		Routes: []runtime.Route{runtime.Handle(orderType, s.handle)}})
	must(s.t, err)
	s.consumer = c
	s.t.Cleanup(func() { _ = c.Close(context.Background()) })
}

func (s *shop) stopConsumer() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	must(s.t, s.consumer.Close(ctx))
}

// publish sends one order through the exchange, as the shop does.
func (s *shop) publish(o order, opts ...runtime.PublishOption) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, _ := o["order_id"].(string)
	opts = append([]runtime.PublishOption{runtime.WithRoutingKey("order.placed"), runtime.WithMessageID(id)}, opts...)
	must(s.t, runtime.Publish(ctx, s.conn, orderType, s.q+".ex", o, opts...))
}

// failures makes the shop's failed messages with the warehouse down:
// three orders the warehouse fails (W-1..W-3), two without a customer
// (C-1, C-2), one that asks for a person (P-1, parked) and one with
// script tags in its id (so in its reason), a header and its body.
func (s *shop) failures() {
	s.down.Store(true)
	for i := 1; i <= 3; i++ {
		s.publish(order{"order_id": fmt.Sprintf("W-%d", i), "quantity": i, "customer": "acme"})
	}
	s.publish(order{"order_id": "C-1", "quantity": 1})
	s.publish(order{"order_id": "C-2", "quantity": 2})
	s.publish(order{"order_id": "P-1", "quantity": 1, "customer": "acme", "note": "park"})
	// Written as a hostile producer writes it: the tags in the body as
	// they are (encoding/json would escape them as \u003c).
	out, err := runtime.NewOutgoing(context.Background(), s.conn, orderType, s.q+".ex", order{"order_id": scriptID, "quantity": 1},
		runtime.WithRoutingKey("order.placed"), runtime.WithMessageID(scriptID), runtime.WithHeaders(map[string]any{"note": `<script>window.pwned = true</script>`}))
	must(s.t, err)
	out.Msg.Body = []byte(`{"order_id": "` + strings.ReplaceAll(scriptID, `"`, `\"`) + `", "quantity": 1, "comment": "<script>window.pwned = true</script><img src=x onerror=\"window.pwned=true\">"}`)
	p, err := s.conn.PublishOutgoing(context.Background(), out)
	must(s.t, err)
	must(s.t, p.Wait(context.Background()))
	s.waitDepth(s.orders+".dlq", 6)
	s.waitDepth(s.orders+".parked", 1)
}

func (s *shop) depth(q string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := s.conn.MessageCount(ctx, q)
	must(s.t, err)
	return n
}

func (s *shop) waitDepth(q string, want int) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := s.depth(q)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s holds %d messages, want %d", q, n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serve starts the console on a port of its own, with a token when
// withToken.
func (s *shop) serve(withToken bool) {
	s.t.Helper()
	m, err := topo.Load(s.file)
	must(s.t, err)
	dec, err := bodies.New(s.file, "")
	must(s.t, err)
	s.logs = &syncBuffer{}
	cfg := Config{Conn: s.conn, Manifest: m, File: s.file, Bodies: dec, AuditFile: filepath.Join(s.dir, "acemq-audit.jsonl"),
		Log: slog.New(slog.NewTextHandler(s.logs, nil)),
		Declare: func(ctx context.Context, q string) error {
			conn, err := amqp.Dial(s.url)
			if err != nil {
				return err
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil {
				return err
			}
			_, err = ch.QueueDeclare(q, true, false, false, false, nil)
			return err
		},
	}
	if withToken {
		cfg.Tokens = map[string]string{testToken: testName}
	}
	user, pass, vhost := credentials(s.url)
	if client, err := rabbithole.NewClient(brokertest.MgmtURL(), user, pass); err == nil {
		cfg.Topology = NewTopology(client, vhost, m)
	}
	srv, err := New(cfg)
	must(s.t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(s.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	s.srv, s.cancel, s.base = srv, cancel, "http://"+ln.Addr().String()
	srv.Run(ctx)
	go func() { _ = srv.Serve(ctx, ln) }()
	s.t.Cleanup(func() {
		cancel()
		_ = srv.Close()
	})
}

// credentials are the user, password and vhost of an AMQP URL.
func credentials(raw string) (user, pass, vhost string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "guest", "guest", "/"
	}
	user, pass = "guest", "guest"
	if u.User != nil {
		user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			pass = p
		}
	}
	vhost = strings.TrimPrefix(u.Path, "/")
	if vhost == "" {
		vhost = "/"
	}
	return user, pass, vhost
}

// waitPass waits for the console's pass to end.
func (s *shop) waitPass() PassView {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		x := s.srv.Index()
		x.mu.RLock()
		p := x.pass()
		x.mu.RUnlock()
		if !p.Running {
			return p
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the pass did not end: %+v", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// client is a browser-like HTTP client: a cookie jar, the console's
// header on every request and, once signed in, the CSRF token.
type client struct {
	t    testing.TB
	base string
	http *http.Client
	csrf string
	// bearer, when set, is sent as Authorization: Bearer.
	bearer string
}

func (s *shop) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: s.t, base: s.base, http: &http.Client{Jar: jar, Timeout: 60 * time.Second}}
}

func (c *client) do(method, path string, body any) (int, map[string]any, string) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	must(c.t, err)
	req.Header.Set("X-Acemq", "1")
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	resp, err := c.http.Do(req)
	must(c.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, string(raw)
}

func (c *client) signIn(token string) {
	c.t.Helper()
	code, out, raw := c.do("POST", "/api/login", map[string]string{"token": token})
	if code != 200 {
		c.t.Fatalf("sign in: %d %s", code, raw)
	}
	c.csrf, _ = out["csrf"].(string)
}

// waitJob waits for job id to end and returns it.
func (c *client) waitJob(id string) map[string]any {
	c.t.Helper()
	return c.waitJobFor(id, time.Minute)
}

func (c *client) waitJobFor(id string, d time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		_, out, _ := c.do("GET", "/api/jobs", nil)
		for _, j := range out["jobs"].([]any) {
			job := j.(map[string]any)
			if job["id"] == id && job["state"] != "running" {
				return job
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("job %s did not end", id)
	return nil
}

var errTimeout = errors.New("timeout")

// receive waits for the consumer to take an order.
func (s *shop) receive(d time.Duration) (*runtime.Message[order], error) {
	select {
	case m := <-s.received:
		return m, nil
	case <-time.After(d):
		return nil, errTimeout
	}
}
