package export

import (
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime"
)

// Topology is the runtime topology of m: the value the generated
// Topology() function returns (internal/gen/emit writes the same fields).
func Topology(m *model.Model) *runtime.Topology {
	t := runtime.NewTopology()
	for _, x := range m.Exchanges {
		t.Exchange(x.Name, x.Kind)
	}
	for _, q := range m.Queues {
		rq := runtime.Queue{
			Name:          q.Name,
			Type:          q.Type,
			DeadLetter:    q.DeadLetter,
			DeliveryLimit: q.DeliveryLimit,
			QuorumRungs:   q.QuorumRungs,
			NativeRetry:   q.NativeRetry,
		}
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
	}
	for _, q := range m.Queues {
		for _, b := range q.Bindings {
			t.Bind(q.Name, b.Exchange.Name, b.RoutingKey)
		}
	}
	t.Delay = runtime.QueueType(m.Delay)
	return t
}
