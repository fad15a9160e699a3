package ui

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/drain"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime/wire"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// TopologyView is the manifest against the live broker: what acemq
// topology diff says, and for each queue what acemq drain says.
type TopologyView struct {
	At          string         `json:"at"`
	Exchanges   []TopoExchange `json:"exchanges"`
	Queues      []TopoQueue    `json:"queues"`
	Bindings    []TopoBinding  `json:"bindings"`
	Differences []string       `json:"differences"`
}

// TopoExchange is an exchange of the picture.
type TopoExchange struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Missing bool   `json:"missing,omitempty"`
}

// TopoQueue is a queue of the picture, with its drain report.
type TopoQueue struct {
	Name      string `json:"name"`
	Role      string `json:"role"` // queue, dlq, parked or rung
	Owner     string `json:"owner"`
	Missing   bool   `json:"missing,omitempty"`
	Differs   bool   `json:"differs,omitempty"`
	Depth     int    `json:"depth"`
	Consumers int    `json:"consumers"`
	Oldest    string `json:"oldest,omitempty"` // the oldest message's age, "" unknown
	Draining  bool   `json:"draining"`
	Verdict   string `json:"verdict"`
}

// TopoBinding is a binding of the picture: to a queue, or to another
// exchange (the delay topology's).
type TopoBinding struct {
	Exchange   string `json:"exchange"`
	Queue      string `json:"queue,omitempty"`
	ToExchange string `json:"to_exchange,omitempty"`
	RoutingKey string `json:"routing_key"`
	Missing    bool   `json:"missing,omitempty"`
}

// NewTopology draws m against the broker behind client (vhost), through
// the management API.
func NewTopology(client *rabbithole.Client, vhost string, m *model.Model) func(ctx context.Context) (TopologyView, error) {
	t := topo.Topology(m)
	return func(ctx context.Context) (TopologyView, error) {
		v := TopologyView{At: time.Now().UTC().Format(time.RFC3339)}
		decls, err := t.Declarations()
		if err != nil {
			return v, err
		}
		diffs, err := topo.Diff(client, vhost, t)
		if err != nil {
			return v, err
		}
		missing, differs := map[string]bool{}, map[string]bool{}
		missingBinding := map[[3]string]bool{}
		for _, d := range diffs {
			v.Differences = append(v.Differences, d.String())
			switch {
			case d.Kind == "binding":
				missingBinding[[3]string{d.Exchange, d.Name, d.RoutingKey}] = true
			case d.Missing:
				missing[d.Kind+" "+d.Name] = true
			default:
				differs[d.Kind+" "+d.Name] = true
			}
		}
		for _, x := range decls.Exchanges {
			v.Exchanges = append(v.Exchanges, TopoExchange{Name: x.Name, Kind: x.Kind, Missing: missing["exchange "+x.Name]})
		}
		for _, b := range decls.Bindings {
			v.Bindings = append(v.Bindings, TopoBinding{Exchange: b.Exchange, Queue: b.Queue, RoutingKey: b.RoutingKey,
				Missing: missingBinding[[3]string{b.Exchange, b.Queue, b.RoutingKey}]})
		}
		for _, b := range decls.ExchangeBindings {
			v.Bindings = append(v.Bindings, TopoBinding{Exchange: b.Exchange, ToExchange: b.ToExchange, RoutingKey: b.RoutingKey})
		}
		for _, q := range decls.Queues {
			tq := TopoQueue{Name: q.Name, Role: "queue", Owner: q.Name, Missing: missing["queue "+q.Name], Differs: differs["queue "+q.Name]}
			if o, kind, ok := wire.Owner(q.Name); ok {
				tq.Owner = o
				switch kind {
				case wire.Rung:
					tq.Role = "rung"
				case wire.Parked:
					tq.Role = "parked"
				default:
					tq.Role = "dlq"
				}
			}
			if !tq.Missing {
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				r, err := drain.Check(cctx, client, vhost, q.Name, drain.Options{})
				cancel()
				switch {
				case errors.Is(err, drain.ErrQueueNotFound):
					tq.Missing = true
				case err != nil:
					return v, err
				default:
					tq.Depth, tq.Consumers, tq.Draining, tq.Verdict = r.Depth, r.Consumers, r.Draining, r.Why
					if r.OldestKnown {
						tq.Oldest = r.OldestAge.Round(time.Second).String()
					}
				}
			}
			v.Queues = append(v.Queues, tq)
		}
		return v, nil
	}
}

func (s *Server) handleTopology(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Topology == nil {
		writeError(w, http.StatusNotFound, "no topology: the console was started without a manifest")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	v, err := s.cfg.Topology(ctx)
	if err != nil {
		s.fail(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
