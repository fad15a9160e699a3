package export

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	avroall "github.com/acemq/acemq-go/golden/avro-all/want"
	imports "github.com/acemq/acemq-go/golden/imports/want"
	jsonschemaall "github.com/acemq/acemq-go/golden/jsonschema-all/want"
	names "github.com/acemq/acemq-go/golden/names/want"
	orders "github.com/acemq/acemq-go/golden/orders/want"
	pricing "github.com/acemq/acemq-go/golden/pricing/want"
	registry "github.com/acemq/acemq-go/golden/registry/want"
	reminders "github.com/acemq/acemq-go/golden/reminders/want"
	shipping "github.com/acemq/acemq-go/golden/shipping/want"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqtest"
)

// generatedTopologies are the Topology() functions acemq-gen generated
// for the golden cases (golden/<case>/want).
var generatedTopologies = map[string]func() *runtime.Topology{
	"avro-all": avroall.Topology, "imports": imports.Topology, "jsonschema-all": jsonschemaall.Topology, "names": names.Topology,
	"orders": orders.Topology, "pricing": pricing.Topology, "registry": registry.Topology, "reminders": reminders.Topology, "shipping": shipping.Topology,
}

// generatedTopology is the case's generated Topology(), or — for a golden
// case added since this list — the topology export builds from the model
// (TestTopologyIsGenerated compares the two where both exist).
func generatedTopology(t *testing.T, c goldenCase) *runtime.Topology {
	if top := generatedTopologies[c.name]; top != nil {
		return top()
	}
	t.Logf("golden case %s is not in generatedTopologies: comparing with export.Topology (add it)", c.name)
	return Topology(c.model)
}

// TestTopologyIsGenerated: the topology every format is built from is the
// one the generated Topology() returns, declaration for declaration.
func TestTopologyIsGenerated(t *testing.T) {
	for _, c := range goldenCases(t) {
		top := generatedTopologies[c.name]
		if top == nil {
			t.Errorf("golden case %s is not in generatedTopologies", c.name)
			continue
		}
		got, err1 := Topology(c.model).Declarations()
		want, err2 := top().Declarations()
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", c.name, err1, err2)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: export's topology differs from the generated Topology():\n got %+v\nwant %+v", c.name, got, want)
		}
	}
}

// brokerState is what the management API says a vhost holds, every field
// the definitions file sets: queues and exchanges by name (the broker's
// own amq.* exchanges and the default exchange left out), bindings sorted.
type brokerState struct {
	Queues    map[string]string
	Exchanges map[string]string
	Bindings  []string
}

func readState(t *testing.T, vhost string) brokerState {
	t.Helper()
	v := url.PathEscape(vhost)
	var qs []struct {
		Name       string         `json:"name"`
		Durable    bool           `json:"durable"`
		AutoDelete bool           `json:"auto_delete"`
		Exclusive  bool           `json:"exclusive"`
		Type       string         `json:"type"`
		Arguments  map[string]any `json:"arguments"`
	}
	var xs []struct {
		Name       string         `json:"name"`
		Type       string         `json:"type"`
		Durable    bool           `json:"durable"`
		AutoDelete bool           `json:"auto_delete"`
		Internal   bool           `json:"internal"`
		Arguments  map[string]any `json:"arguments"`
	}
	var bs []struct {
		Source          string         `json:"source"`
		Destination     string         `json:"destination"`
		DestinationType string         `json:"destination_type"`
		RoutingKey      string         `json:"routing_key"`
		Arguments       map[string]any `json:"arguments"`
	}
	for path, into := range map[string]any{"queues/" + v: &qs, "exchanges/" + v: &xs, "bindings/" + v: &bs} {
		if err := brokertest.Management(path, into); err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
	}
	s := brokerState{Queues: map[string]string{}, Exchanges: map[string]string{}}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, q := range qs {
		s.Queues[q.Name] = fmt.Sprintf("%s durable=%t auto_delete=%t exclusive=%t %s", q.Type, q.Durable, q.AutoDelete, q.Exclusive, js(q.Arguments))
	}
	for _, x := range xs {
		if x.Name == "" || strings.HasPrefix(x.Name, "amq.") {
			continue
		}
		s.Exchanges[x.Name] = fmt.Sprintf("%s durable=%t auto_delete=%t internal=%t %s", x.Type, x.Durable, x.AutoDelete, x.Internal, js(x.Arguments))
	}
	for _, b := range bs {
		s.Bindings = append(s.Bindings, fmt.Sprintf("%q -> %s %q (%q) %s", b.Source, b.DestinationType, b.Destination, b.RoutingKey, js(b.Arguments)))
	}
	slices.Sort(s.Bindings)
	return s
}

func vhostName(t *testing.T, vhostURL string) string {
	t.Helper()
	u, err := url.Parse(vhostURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// TestDefinitionsImport loads each golden case's definitions file into a
// fresh vhost through the management API's POST /api/definitions/{vhost}
// (the importer rabbitmqctl import_definitions runs), declares the case's
// generated Topology() with (*Connection).Declare in a second fresh vhost,
// and wants the two vhosts to hold the same queues, exchanges and bindings
// with the same arguments. Both vhosts are deleted at the end.
func TestDefinitionsImport(t *testing.T) {
	brokertest.Require(t)
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			importedURL, declaredURL := acemqtest.VHost(t), acemqtest.VHost(t)
			imported := vhostName(t, importedURL)
			defs, err := Definitions(c.model, Options{Vhost: imported})
			if err != nil {
				t.Fatal(err)
			}
			if err := brokertest.ManagementSend(http.MethodPost, "definitions/"+url.PathEscape(imported), json.RawMessage(defs)); err != nil {
				t.Fatalf("import the definitions: %v", err)
			}

			conn, err := runtime.Dial(ctx, declaredURL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if err := conn.Declare(ctx, generatedTopology(t, c)); err != nil {
				t.Fatalf("Declare(ctx, Topology()): %v", err)
			}

			got, want := readState(t, imported), readState(t, vhostName(t, declaredURL))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the imported vhost differs from the declared one:\nimported: %v\ndeclared: %v", got, want)
			}
			// The file has everything Declare declares: q.dlq, q.parked,
			// the rungs, acemq.dlx and acemq.retry, their bindings.
			for _, q := range c.model.Queues {
				for _, name := range []string{q.Name, wire.DeadLetterQueue(q.Name), wire.ParkedQueue(q.Name)} {
					if _, ok := got.Queues[name]; !ok {
						t.Errorf("queue %s was not imported", name)
					}
				}
				if q.Retry != nil {
					for _, d := range wire.BrokerRungs(wire.Waits(q.Retry.Value.Attempts(), q.Retry.Value.Delay), q.Retry.Value.WaitInBrokerFrom()) {
						if _, ok := got.Queues[wire.RungQueue(q.Name, d)]; !ok {
							t.Errorf("rung %s was not imported", wire.RungQueue(q.Name, d))
						}
					}
				}
			}
			for _, x := range []string{wire.DeadLetterExchange, wire.RetryExchange} {
				if _, ok := got.Exchanges[x]; !ok {
					t.Errorf("exchange %s was not imported", x)
				}
			}
		})
	}
}

type nopOrders struct{}

func (nopOrders) HandleOrderPlaced(context.Context, *runtime.Message[orders.OrderPlaced]) runtime.Ack {
	return runtime.Accept()
}

func (nopOrders) HandleOrderCancelled(context.Context, *runtime.Message[orders.OrderCancelled]) runtime.Ack {
	return runtime.Accept()
}

// TestDefinitionsConsumerDeclaresNothing imports the orders case's
// definitions into a fresh vhost, starts the generated consumer there (it
// declares the queue's .dlq and .parked before subscribing), and wants the
// vhost to hold exactly what the file made: the consumer's declarations
// match the imported queues, so nothing new appears and nothing is
// refused as inequivalent.
func TestDefinitionsConsumerDeclaresNothing(t *testing.T) {
	brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := buildManifest(t, "../../../golden/orders/acemq.yaml")
	vhostURL := acemqtest.VHost(t)
	vhost := vhostName(t, vhostURL)
	defs, err := Definitions(m, Options{Vhost: vhost})
	if err != nil {
		t.Fatal(err)
	}
	if err := brokertest.ManagementSend(http.MethodPost, "definitions/"+url.PathEscape(vhost), json.RawMessage(defs)); err != nil {
		t.Fatalf("import the definitions: %v", err)
	}
	before := readState(t, vhost)
	conn, err := runtime.Dial(ctx, vhostURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	consumer, err := orders.ConsumeOrdersNew(ctx, conn, nopOrders{})
	if err != nil {
		t.Fatalf("the generated consumer on the imported topology: %v", err)
	}
	if err := consumer.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Declaring the same topology again over the imported one is refused
	// for no argument either.
	if err := conn.Declare(ctx, orders.Topology()); err != nil {
		t.Fatalf("Declare over the imported definitions: %v", err)
	}
	if after := readState(t, vhost); !reflect.DeepEqual(before, after) {
		t.Errorf("the consumer declared something new:\nbefore: %v\nafter:  %v", before, after)
	}
	if len(before.Queues) != 8 { // golden.orders.new, .dlq, .parked, three broker rungs and two spill rungs
		t.Errorf("imported %d queues, want 8: %v", len(before.Queues), before.Queues)
	}
}
