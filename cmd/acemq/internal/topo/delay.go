package topo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// diffExchangeBindings reports the delay topology's exchange-to-exchange
// bindings the broker lacks (Kind binding, Name the destination exchange).
func diffExchangeBindings(c *rabbithole.Client, vhost string, bs []runtime.Binding) ([]Difference, error) {
	var out []Difference
	have := map[string][]rabbithole.BindingInfo{}
	for _, b := range bs {
		got, seen := have[b.Exchange]
		if !seen {
			var err error
			got, err = c.ListExchangeBindingsWithSource(vhost, b.Exchange)
			if err != nil && !isNotFound(err) {
				return nil, fmt.Errorf("bindings of exchange %s: %w", b.Exchange, err)
			}
			have[b.Exchange] = got
		}
		if !slices.ContainsFunc(got, func(x rabbithole.BindingInfo) bool {
			return x.DestinationType == "exchange" && x.Destination == b.ToExchange && x.RoutingKey == b.RoutingKey
		}) {
			out = append(out, Difference{Kind: "binding", Name: b.ToExchange, Missing: true, Exchange: b.Exchange, RoutingKey: b.RoutingKey})
		}
	}
	return out, nil
}

// inDelay reports whether a difference is the delay topology's: a level,
// its delivery exchange, or a binding from one of them.
func inDelay(d Difference) bool {
	delay := func(name string) bool {
		_, _, ok := wire.DelayLevelOf(name)
		return ok || strings.HasSuffix(name, wire.DelayPrefixSuffix+wire.DelayDeliverySuffix)
	}
	return delay(d.Name) || d.Kind == "binding" && delay(d.Exchange)
}

// SplitDelay separates the delay topology's differences from the rest.
func SplitDelay(diffs []Difference) (rest, delay []Difference) {
	for _, d := range diffs {
		if inDelay(d) {
			delay = append(delay, d)
		} else {
			rest = append(rest, d)
		}
	}
	return rest, delay
}

// DelayLines are the delay topology's differences as a group, not 28
// lines of each kind: what is missing, counted by kind, and each argument
// that differs with how many of its declarations it differs in.
func DelayLines(diffs []Difference) []string {
	if len(diffs) == 0 {
		return nil
	}
	prefix := wire.DelayPrefix
	missing := map[string]int{}
	type arg struct {
		kind, argument, broker, wanted string
	}
	var args []arg
	count := map[arg]int{}
	for _, d := range diffs {
		if p, _, ok := wire.DelayLevelOf(d.Name); ok {
			prefix = p
		}
		if d.Missing {
			missing[d.Kind]++
			continue
		}
		a := arg{d.Kind, d.Argument, show(d.Broker), show(d.Wanted)}
		if count[a] == 0 {
			args = append(args, a)
		}
		count[a]++
	}
	var out []string
	if len(missing) > 0 {
		var parts []string
		for _, k := range []string{"exchange", "queue", "binding"} {
			if n := missing[k]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, k, k+"s")))
			}
		}
		out = append(out, fmt.Sprintf("missing delay topology %s.* (%d levels): %s", prefix, wire.DelayLevels, strings.Join(parts, ", ")))
	}
	for _, a := range args {
		n := count[a]
		out = append(out, fmt.Sprintf("delay topology %s.*: %s is %s on the broker, %s in the manifest (%d %s)", prefix, a.argument, a.broker, a.wanted, n, plural(n, a.kind, a.kind+"s")))
	}
	return out
}
