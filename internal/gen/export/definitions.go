package export

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/acemq/acemq-go/internal/gen/model"
)

// definitionsFile is a RabbitMQ definitions file, as rabbitmqctl
// import_definitions and the management API's POST /api/definitions read
// it: only the parts a topology has.
type definitionsFile struct {
	Vhosts    []defVhost    `json:"vhosts"`
	Queues    []defQueue    `json:"queues"`
	Exchanges []defExchange `json:"exchanges"`
	Bindings  []defBinding  `json:"bindings"`
}

type defVhost struct {
	Name string `json:"name"`
}

type defQueue struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

type defExchange struct {
	Name       string         `json:"name"`
	Vhost      string         `json:"vhost"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

type defBinding struct {
	Source          string         `json:"source"`
	Vhost           string         `json:"vhost"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments"`
}

// Definitions is the RabbitMQ definitions file of m's topology: every
// queue, exchange and binding (*runtime.Connection).Declare declares for
// it — q.dlq, q.parked, the rungs, acemq.dlx and acemq.retry with their
// bindings included — in the vhost opts.Vhost, sorted by name.
func Definitions(m *model.Model, opts Options) ([]byte, error) {
	d, err := Topology(m).Declarations()
	if err != nil {
		return nil, fmt.Errorf("export definitions: %w", err)
	}
	vh := opts.vhost()
	f := definitionsFile{Vhosts: []defVhost{{vh}}, Queues: []defQueue{}, Exchanges: []defExchange{}, Bindings: []defBinding{}}
	for _, q := range d.Queues {
		f.Queues = append(f.Queues, defQueue{Name: q.Name, Vhost: vh, Durable: true, Arguments: args(q.Arguments)})
	}
	for _, x := range d.Exchanges {
		f.Exchanges = append(f.Exchanges, defExchange{Name: x.Name, Vhost: vh, Type: x.Kind, Durable: true, Arguments: args(x.Arguments)})
	}
	for _, b := range d.Bindings {
		f.Bindings = append(f.Bindings, defBinding{Source: b.Exchange, Vhost: vh, Destination: b.Queue, DestinationType: "queue", RoutingKey: b.RoutingKey, Arguments: args(b.Arguments)})
	}
	for _, b := range d.ExchangeBindings { // the delay topology's
		f.Bindings = append(f.Bindings, defBinding{Source: b.Exchange, Vhost: vh, Destination: b.ToExchange, DestinationType: "exchange", RoutingKey: b.RoutingKey, Arguments: args(b.Arguments)})
	}
	slices.SortFunc(f.Queues, func(a, b defQueue) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(f.Exchanges, func(a, b defExchange) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(f.Bindings, func(a, b defBinding) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Destination, b.Destination), cmp.Compare(a.RoutingKey, b.RoutingKey))
	})
	return marshal(f)
}

// args is never nil: the definitions format writes {} for no arguments.
func args(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// marshal is the JSON of every format: two-space indent, map keys sorted
// (encoding/json), no HTML escaping, a final newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
