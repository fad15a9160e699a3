package model

import (
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/runtime/wire"
)

// delayed names the delayed forms of a publisher's message with delay:
// true (Publish<M>After and …At, and their Tx forms on the outbox), and
// refuses what the delay topology cannot deliver: a request, the default
// exchange, a routing key a level would route on.
func (b *builder) delayed(who string, methods, txMethods map[string]methodClaim, p *Publisher, mp *manifest.Publisher, pm *manifest.Published, pub *Published) {
	at := pm.Delay.Pos
	switch {
	case pub.RequestName != "":
		b.errorf(at, "%s: %q is a request (it waits for its reply), which cannot be delayed; remove delay: true", who, pm.Message.Value)
		return
	case mp.Exchange == nil || mp.Exchange.Value == "":
		b.errorf(at, "%s publishes %q with delay: true to the default exchange: a delayed message goes to a named exchange (nothing can be bound to the default exchange); give the publisher an exchange: bound to the queue", who, pm.Message.Value)
		return
	}
	if err := wire.CheckDelayDestination(mp.Exchange.Value, pub.RoutingKey); err != nil {
		if pm.RoutingKey != nil {
			at = pm.RoutingKey.Pos
		}
		b.errorf(at, "%s publishes %q with delay: true: %v", who, pm.Message.Value, err)
		return
	}
	m := pub.Message
	pub.AfterName, pub.AtName = "Publish"+m.GoName+"After", "Publish"+m.GoName+"At"
	b.claimMethod(who, methods, pub.AfterName, pm.Message, " (its delayed method)")
	b.claimMethod(who, methods, pub.AtName, pm.Message, " (its delayed method)")
	if p.Outbox {
		pub.AfterTxName, pub.AtTxName = pub.AfterName+"Tx", pub.AtName+"Tx"
		b.claimMethod(who, txMethods, pub.AfterTxName, pm.Message, " (its delayed outbox method)")
		b.claimMethod(who, txMethods, pub.AtTxName, pm.Message, " (its delayed outbox method)")
	}
	if b.m.Delay == "" {
		b.m.Delay = "classic"
	}
}

// delayLevels is delay_levels: (its value checked by the manifest's
// schema), which only a manifest with a delayed message has a use for.
func (b *builder) delayLevels() {
	dl := b.file.DelayLevels
	if dl == nil {
		return
	}
	if b.m.Delay == "" {
		b.errorf(dl.Pos, "delay_levels %q: no publisher message has delay: true, so no delay topology is declared; remove delay_levels, or mark a message delay: true", dl.Value)
		return
	}
	b.m.Delay = dl.Value
}
