//go:build cluster

package clustertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// total is how many messages each scenario publishes.
const total = 10_000

// node is one node of the cluster make cluster brings up.
type node struct {
	name string // rmqc1, as scripts/cluster.sh names it
	amqp string
	mgmt string
}

var nodes = []node{
	{"rmqc1", "amqp://guest:guest@127.0.0.1:5691/", "http://127.0.0.1:15691"},
	{"rmqc2", "amqp://guest:guest@127.0.0.1:5692/", "http://127.0.0.1:15692"},
	{"rmqc3", "amqp://guest:guest@127.0.0.1:5693/", "http://127.0.0.1:15693"},
}

var text = runtime.NewTextType("acemq.test.cluster")

// requireCluster makes sure every node answers: a missing cluster fails
// the test under CI=true and skips it elsewhere; under -short the test is
// skipped without trying (the broker-free quick test).
func requireCluster(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the cluster: skipped under -short (the broker-free quick test)")
	}
	for _, n := range nodes {
		u, _ := url.Parse(n.amqp)
		c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("cluster node %s does not answer at %s (CI=true: a missing cluster fails; make cluster): %v", n.name, u.Host, err)
			}
			t.Skipf("cluster node %s does not answer at %s (run make cluster): %v", n.name, u.Host, err)
		}
		c.Close()
	}
}

func urls() string {
	var us []string
	for _, n := range nodes {
		us = append(us, n.amqp)
	}
	return strings.Join(us, ",")
}

// cluster runs scripts/cluster.sh (stop-node, start-node), which names
// its node with -n on every CLI call.
func cluster(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"../../scripts/cluster.sh"}, args...)...)
	out, err := cmd.CombinedOutput()
	t.Logf("cluster.sh %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("cluster.sh %s: %v", strings.Join(args, " "), err)
	}
}

// mgmt GETs path from the first node whose management API answers.
func mgmt(path string, v any) error {
	var errs []error
	for _, n := range nodes {
		req, _ := http.NewRequest(http.MethodGet, n.mgmt+"/api/"+path, nil)
		req.SetBasicAuth("guest", "guest")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = func() error {
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s %s: %s", n.mgmt, path, resp.Status)
			}
			return json.NewDecoder(resp.Body).Decode(v)
		}()
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

type queueInfo struct {
	Messages int      `json:"messages"`
	Leader   string   `json:"leader"`
	Members  []string `json:"members"`
	Online   []string `json:"online"`
	Type     string   `json:"type"`
}

func queueOf(t *testing.T, q string) queueInfo {
	t.Helper()
	var qi queueInfo
	if err := mgmt("queues/%2F/"+url.PathEscape(q), &qi); err != nil {
		t.Fatalf("queue %s: %v", q, err)
	}
	return qi
}

// leaderOf is the cluster.sh name of the node leading q.
func leaderOf(t *testing.T, q string) string {
	t.Helper()
	l := strings.TrimSuffix(queueOf(t, q).Leader, "@localhost")
	if l == "" {
		t.Fatalf("queue %s has no leader", q)
	}
	return l
}

// waitAllOnline waits until every member of q is online again.
func waitAllOnline(t *testing.T, q string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		qi := queueOf(t, q)
		if len(qi.Online) == len(nodes) && qi.Leader != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: members online %v of %v after 60s", q, qi.Online, qi.Members)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// scenario is one run: a publisher and a consumer of their own on a quorum
// queue of their own, and what they saw.
type scenario struct {
	t     *testing.T
	q     string
	ids   []string
	fault string

	mu        sync.Mutex
	published int
	confirmed map[string]bool
	accepted  map[string]int
	calls     int
	dup       int
	confirmAt []time.Time // one per confirmed batch
	handledAt []time.Time // one per accepted message
	faultFrom time.Time   // when the first node was stopped
	faultTo   time.Time   // when the last stopped node was back
	stopped   map[string]bool
}

func newScenario(t *testing.T, fault string) *scenario {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s := &scenario{t: t, q: "test.cluster." + fault + "." + hex.EncodeToString(b), fault: fault,
		confirmed: map[string]bool{}, accepted: map[string]int{}, stopped: map[string]bool{}}
	// A node the scenario stopped is started again, whatever happens.
	t.Cleanup(func() {
		for _, n := range nodes {
			if s.stopped[n.name] {
				s.startNode(n.name)
			}
		}
	})
	for i := range total {
		s.ids = append(s.ids, fmt.Sprintf("m-%05d", i))
	}
	return s
}

// policy: a message whose number is 0 mod 20 fails once (its retry waits
// 500ms in memory), one whose number is 10 mod 20 fails twice (500ms in
// memory, then 1s in the quorum rung q.retry.1s): 10% of the messages are
// retried, half of those through a rung.
var policy = runtime.Exponential(3, 500*time.Millisecond, time.Second).WithWaitInBrokerFrom(time.Second)

func (s *scenario) handle(_ context.Context, m *runtime.Message[string]) runtime.Ack {
	n, _ := strconv.Atoi(strings.TrimPrefix(m.Payload, "m-"))
	a := m.Envelope.Attempt
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	switch {
	case n%20 == 0 && a < 2:
		return runtime.Retry(errors.New("fails once"))
	case n%20 == 10 && a < 3:
		return runtime.Retry(errors.New("fails twice"))
	}
	s.accepted[m.Payload]++
	if s.accepted[m.Payload] > 1 {
		s.dup++
	}
	s.handledAt = append(s.handledAt, time.Now())
	return runtime.Accept()
}

func dial(t *testing.T, ctx context.Context, name string) *runtime.Connection {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := runtime.Dial(ctx, urls(), runtime.WithOrigin(name), runtime.WithLogger(logger),
		runtime.WithReconnectBackoff(100*time.Millisecond, time.Second))
	if err != nil {
		t.Fatalf("dial the cluster: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// publish sends every id in batches of 50, one batch per pace, each batch
// again until it is confirmed.
func (s *scenario) publish(ctx context.Context, c *runtime.Connection, pace time.Duration) error {
	const batch = 50
	for start := 0; start < len(s.ids); start += batch {
		vs := s.ids[start:min(start+batch, len(s.ids))]
		for try := 1; ; try++ {
			pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err := runtime.PublishBatch(pctx, c, text, "", vs, runtime.WithRoutingKey(s.q))
			cancel()
			s.mu.Lock()
			s.published += len(vs)
			if err == nil {
				for _, id := range vs {
					s.confirmed[id] = true
				}
				s.confirmAt = append(s.confirmAt, time.Now())
			}
			s.mu.Unlock()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if try == 1 || try%10 == 0 {
				first, _, _ := strings.Cut(err.Error(), "\n")
				s.t.Logf("publish batch at %d (try %d): %s; sending it again", start, try, first)
			}
			time.Sleep(200 * time.Millisecond)
		}
		time.Sleep(pace)
	}
	return nil
}

func (s *scenario) counts() (confirmed, accepted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.confirmed), len(s.accepted)
}

// maxGap is the longest time without progress in ts that overlaps the
// fault window [from, to], or 0.
func maxGap(ts []time.Time, from, to time.Time) time.Duration {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	var longest time.Duration
	for i := 1; i < len(ts); i++ {
		if ts[i].Before(from) || ts[i-1].After(to) {
			continue
		}
		longest = max(longest, ts[i].Sub(ts[i-1]))
	}
	return longest
}

// drain takes every message of queue (a set-aside queue, at the end) and
// returns their payloads.
func drain(t *testing.T, queue string) []string {
	t.Helper()
	for _, n := range nodes {
		conn, err := amqp.Dial(n.amqp)
		if err != nil {
			continue
		}
		defer conn.Close()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatalf("channel: %v", err)
		}
		var out []string
		for {
			d, ok, err := ch.Get(queue, true)
			if err != nil {
				t.Fatalf("get from %s: %v", queue, err)
			}
			if !ok {
				return out
			}
			out = append(out, string(d.Body))
		}
	}
	t.Fatalf("no node answers to drain %s", queue)
	return nil
}

func deleteQueues(t *testing.T, q string) {
	var qs []struct {
		Name string `json:"name"`
	}
	if err := mgmt("queues/%2F?columns=name", &qs); err != nil {
		t.Logf("list queues to delete: %v", err)
		return
	}
	for _, n := range nodes {
		conn, err := amqp.Dial(n.amqp)
		if err != nil {
			continue
		}
		defer conn.Close()
		for _, x := range qs {
			if x.Name != q && !strings.HasPrefix(x.Name, q+".") {
				continue
			}
			ch, err := conn.Channel()
			if err != nil {
				return
			}
			_, _ = ch.QueueDelete(x.Name, false, false, false)
			ch.Close()
		}
		return
	}
}

// run declares the queue, starts the consumer and the publisher, calls
// fault once the fraction at of the messages is confirmed, waits until every confirmed
// message is handled (or 4 minutes), prints the fault line and checks it.
func (s *scenario) run(pace time.Duration, at float64, fault func(s *scenario)) {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t.Cleanup(func() { deleteQueues(t, s.q) })

	pc := dial(t, ctx, "acemq-cluster-publisher")
	cc := dial(t, ctx, "acemq-cluster-consumer")
	topo := runtime.NewTopology().Queue(runtime.Queue{Name: s.q, Type: runtime.Quorum, DeadLetter: true,
		Retry: policy, QuorumRungs: true})
	if err := cc.Declare(ctx, topo); err != nil {
		t.Fatalf("declare: %v", err)
	}
	waitAllOnline(t, s.q)
	p := policy
	// The consumer declares q.dlq and q.parked as it subscribes: classic
	// queues, on the declaring node only; while that node is down the
	// declare's 404 ("process is stopped") is tolerated and it consumes
	// anyway (docs/reliability.md).
	consumer, err := runtime.Consume(ctx, cc, runtime.ConsumerSpec{Queue: s.q, Retry: &p,
		Routes: []runtime.Route{runtime.Handle(text, s.handle)}})
	if err != nil {
		t.Fatalf("consume: %v", err)
	}
	t.Logf("queue %s: leader %s; publisher on %s, consumer on %s", s.q, leaderOf(t, s.q), pc.Address(), cc.Address())

	pubDone := make(chan error, 1)
	go func() { pubDone <- s.publish(ctx, pc, pace) }()

	for {
		if c, _ := s.counts(); c >= int(at*total) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fault(s)
	t.Logf("after the fault: publisher on %s, consumer on %s", pc.Address(), cc.Address())

	if err := <-pubDone; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		c, a := s.counts()
		if a >= c || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Let duplicates and late retries arrive before counting.
	time.Sleep(3 * time.Second)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := consumer.Close(cctx); err != nil {
		t.Logf("consumer close: %v", err)
	}
	ccancel()

	dlq := drain(t, wire.DeadLetterQueue(s.q))
	parked := drain(t, wire.ParkedQueue(s.q))
	setAside := map[string]bool{}
	for _, id := range append(slices.Clone(dlq), parked...) {
		setAside[id] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var lost []string
	for id := range s.confirmed {
		if s.accepted[id] == 0 && !setAside[id] {
			lost = append(lost, id)
		}
	}
	slices.Sort(lost)
	recover := max(maxGap(s.confirmAt, s.faultFrom, s.faultTo), maxGap(s.handledAt, s.faultFrom, s.faultTo))
	line := fmt.Sprintf("fault=%s published=%d confirmed=%d handled=%d dlq=%d parked=%d lost=%d duplicated=%d recover_ms=%d",
		s.fault, s.published, len(s.confirmed), len(s.accepted), len(dlq), len(parked), len(lost), s.dup, recover.Milliseconds())
	fmt.Println(line)
	t.Log(line)
	t.Logf("handler calls %d (retries included)", s.calls)

	if len(s.confirmed) != total {
		t.Errorf("confirmed %d of %d", len(s.confirmed), total)
	}
	if len(lost) > 0 {
		t.Errorf("lost %d confirmed messages, first %v", len(lost), lost[:min(10, len(lost))])
	}
	if len(dlq) != 0 || len(parked) != 0 {
		t.Errorf("set aside: %d in %s (first %v), %d parked; none should be (no handler gives up, the delivery limit is 50)",
			len(dlq), wire.DeadLetterQueue(s.q), dlq[:min(5, len(dlq))], len(parked))
	}
	if recover > 30*time.Second {
		t.Errorf("recover_ms=%d: publisher or consumer stalled more than 30s around the fault", recover.Milliseconds())
	}
}

// stopNode stops n and reports when it is down.
func (s *scenario) stopNode(n string) {
	rung := wire.RungQueue(s.q, time.Second)
	r := queueOf(s.t, rung)
	s.t.Logf("stopping %s; quorum rung %s: leader %s, %d messages waiting in it", n, rung, r.Leader, r.Messages)
	s.mu.Lock()
	if s.faultFrom.IsZero() {
		s.faultFrom = time.Now()
	}
	s.stopped[n] = true
	s.mu.Unlock()
	cluster(s.t, "stop-node", n)
}

// startNode starts n again and waits until it answers.
func (s *scenario) startNode(n string) {
	cluster(s.t, "start-node", n)
	s.mu.Lock()
	delete(s.stopped, n)
	s.mu.Unlock()
}

// waitProgress waits until, after since, the publisher had a confirm and
// the consumer handled a message: both are back.
func (s *scenario) waitProgress(since time.Time) time.Duration {
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.mu.Lock()
		pub := len(s.confirmAt) > 0 && s.confirmAt[len(s.confirmAt)-1].After(since)
		done := len(s.confirmed) == total
		con := len(s.handledAt) > 0 && s.handledAt[len(s.handledAt)-1].After(since) ||
			done && len(s.accepted) == total
		s.mu.Unlock()
		if (pub || done) && con {
			return time.Since(since)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no progress 60s after stopping a node (publisher %v, consumer %v)", pub, con)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *scenario) faultEnd() {
	s.mu.Lock()
	s.faultTo = time.Now()
	s.mu.Unlock()
}

// TestLeaderStopped stops the node that leads the queue (the one both
// clients are connected to: a quorum queue's leader is the declaring
// client's node) halfway, starts it again 15s later.
func TestLeaderStopped(t *testing.T) {
	requireCluster(t)
	s := newScenario(t, "leader-stopped")
	s.run(100*time.Millisecond, 0.5, func(s *scenario) {
		leader := leaderOf(t, s.q)
		t.Logf("stopping %s, the leader of %s", leader, s.q)
		s.stopNode(leader)
		down := time.Now()
		back := s.waitProgress(down)
		t.Logf("publisher and consumer progressing %d ms after %s was down; new leader %s", back.Milliseconds(), leader, leaderOf(t, s.q))
		time.Sleep(15 * time.Second)
		s.startNode(leader)
		waitAllOnline(t, s.q)
		s.faultEnd()
	})
}

// TestRollingRestart restarts the three nodes one at a time (a rolling
// upgrade), each after the queue has all its members online again.
func TestRollingRestart(t *testing.T) {
	requireCluster(t)
	s := newScenario(t, "rolling-restart")
	s.run(300*time.Millisecond, 0.2, func(s *scenario) {
		for _, n := range nodes {
			s.stopNode(n.name)
			down := time.Now()
			back := s.waitProgress(down)
			t.Logf("%s down: publisher and consumer progressing after %d ms; leader %s", n.name, back.Milliseconds(), leaderOf(t, s.q))
			s.startNode(n.name)
			waitAllOnline(t, s.q)
		}
		s.faultEnd()
	})
}
