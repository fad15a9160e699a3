// Package topo reads a manifest's topology and compares it with a live
// broker through the management HTTP API (rabbit-hole): what is missing,
// and what exists with other arguments — the queues RabbitMQ will not
// change once declared.
package topo

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Load reads a manifest into its model (every error with file:line:col).
func Load(path string) (*model.Model, error) {
	s, err := input.LoadFile(path)
	if err != nil {
		return nil, err
	}
	f, shapeErr := s.Manifest, s.ParseErr
	if f == nil {
		return nil, shapeErr
	}
	m, err := model.Build(f, s.FS, s.Dir)
	if shapeErr != nil {
		return nil, shapeErr
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Topology is the runtime topology of a model: what the generated
// Topology() returns.
func Topology(m *model.Model) *runtime.Topology {
	t := runtime.NewTopology()
	for _, e := range m.Exchanges {
		t.Exchange(e.Name, e.Kind)
	}
	for _, q := range m.Queues {
		rq := runtime.Queue{Name: q.Name, Type: q.Type, DeadLetter: q.DeadLetter, DeliveryLimit: q.DeliveryLimit, QuorumRungs: q.QuorumRungs}
		if q.Retry != nil {
			rq.Retry = q.Retry.Value
		}
		if len(q.Arguments) > 0 {
			rq.Arguments = map[string]any{}
			for _, a := range q.Arguments {
				rq.Arguments[a.Key] = a.Value
			}
		}
		t.Queue(rq)
		for _, b := range q.Bindings {
			t.Bind(q.Name, b.Exchange.Name, b.RoutingKey)
		}
	}
	return t
}

// Difference is one way the broker differs from the manifest.
type Difference struct {
	Kind string // exchange, queue or binding
	Name string
	// Missing: the broker has none. Otherwise Argument names what differs
	// (an x-argument, "type" or "durable") with both values.
	Missing        bool
	Argument       string
	Broker, Wanted any
	// Binding only.
	Exchange, RoutingKey string
}

func (d Difference) String() string {
	if d.Kind == "binding" {
		return fmt.Sprintf("missing binding %s ← %s (routing key %q)", d.Name, d.Exchange, d.RoutingKey)
	}
	if d.Missing {
		return fmt.Sprintf("missing %s %s", d.Kind, d.Name)
	}
	return fmt.Sprintf("%s %s: %s is %s on the broker, %s in the manifest", d.Kind, d.Name, d.Argument, show(d.Broker), show(d.Wanted))
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Diff compares every declaration of t with the broker behind c (vhost).
// A queue without x-queue-type is classic, as the broker says on 4.x.
func Diff(c *rabbithole.Client, vhost string, t *runtime.Topology) ([]Difference, error) {
	decls, err := t.Declarations()
	if err != nil {
		return nil, err
	}
	var out []Difference
	for _, e := range decls.Exchanges {
		ex, err := c.GetExchange(vhost, e.Name)
		if isNotFound(err) {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Missing: true})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("exchange %s: %w", e.Name, err)
		}
		if ex.Type != e.Kind {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Argument: "type", Broker: ex.Type, Wanted: e.Kind})
		}
		if !ex.Durable {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Argument: "durable", Broker: false, Wanted: true})
		}
		out = append(out, args("exchange", e.Name, ex.Arguments, e.Arguments)...)
	}
	for _, d := range decls.Queues {
		q, err := c.GetQueue(vhost, d.Name)
		if isNotFound(err) {
			out = append(out, Difference{Kind: "queue", Name: d.Name, Missing: true})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", d.Name, err)
		}
		if !q.Durable {
			out = append(out, Difference{Kind: "queue", Name: d.Name, Argument: "durable", Broker: false, Wanted: true})
		}
		out = append(out, args("queue", d.Name, queueArgs(q.Arguments), queueArgs(d.Arguments))...)
	}
	bindings := map[string][]rabbithole.BindingInfo{}
	for _, b := range decls.Bindings {
		bs, seen := bindings[b.Queue]
		if !seen {
			bs, err = c.ListQueueBindings(vhost, b.Queue)
			if err != nil && !isNotFound(err) {
				return nil, fmt.Errorf("bindings of %s: %w", b.Queue, err)
			}
			bindings[b.Queue] = bs
		}
		if !slices.ContainsFunc(bs, func(x rabbithole.BindingInfo) bool {
			return x.Source == b.Exchange && x.RoutingKey == b.RoutingKey
		}) {
			out = append(out, Difference{Kind: "binding", Name: b.Queue, Missing: true, Exchange: b.Exchange, RoutingKey: b.RoutingKey})
		}
	}
	return out, nil
}

// queueArgs is a queue's arguments with the type made explicit: absent is
// classic.
func queueArgs(a map[string]any) map[string]any {
	out := map[string]any{"x-queue-type": "classic"}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// args lists the arguments that differ between the broker's and the
// manifest's, in name order. Numbers compare by value (JSON gives float64).
func args(kind, name string, broker, wanted map[string]any) []Difference {
	keys := map[string]bool{}
	for k := range broker {
		keys[k] = true
	}
	for k := range wanted {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Difference
	for _, k := range names {
		b, w := broker[k], wanted[k]
		if !same(b, w) {
			out = append(out, Difference{Kind: kind, Name: name, Argument: k, Broker: b, Wanted: w})
		}
	}
	return out
}

func same(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func isNotFound(err error) bool {
	var e rabbithole.ErrorResponse
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

// Conflicts are the differences that Declare cannot fix: something exists
// with other arguments. The rest (missing things) Declare creates.
func Conflicts(diffs []Difference) []Difference {
	var out []Difference
	for _, d := range diffs {
		if !d.Missing {
			out = append(out, d)
		}
	}
	return out
}

// Summary counts a topology's declarations: "3 exchanges, 4 queues, 3 bindings".
func Summary(t *runtime.Topology) string {
	d, err := t.Declarations()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d exchanges, %d queues, %d bindings", len(d.Exchanges), len(d.Queues), len(d.Bindings))
}

// Lines renders differences one a line.
func Lines(diffs []Difference) string {
	var b strings.Builder
	for _, d := range diffs {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}
