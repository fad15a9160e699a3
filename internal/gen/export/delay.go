package export

import (
	"fmt"
	"strconv"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime/wire"
)

// inDelayTopology reports whether name is one of the delay topology's 28
// levels or its delivery exchange: the exports show them as one group.
func inDelayTopology(name string) bool {
	return wire.IsDelayLevel(name) || name == wire.DelayDelivery(wire.DelayPrefix)
}

// delayGroup is the delay topology as one name and one sentence.
func delayGroup(m *model.Model) (name, about string) {
	return wire.DelayLevel(wire.DelayPrefix, 0) + " … " + wire.DelayLevel(wire.DelayPrefix, wire.DelayLevels-1),
		fmt.Sprintf("The delay topology, one group: %d levels, each a topic exchange and a %s queue of one name whose x-message-ttl is 2^n seconds, dead-lettering to the level below, and %s, bound to each exchange of the manifest; a delayed message waits here, its delay in whole seconds written in binary in its routing key, and reaches its exchange with its own routing key when it is due (docs/design.md, Delayed delivery).",
			wire.DelayLevels, m.Delay, wire.DelayDelivery(wire.DelayPrefix))
}

// delayChannel adds the AsyncAPI channel of the delay topology.
func delayChannel(doc *asyncDoc, m *model.Model, ids *ids, chanID map[string]string, msgID map[*model.Message]string, vh string) {
	var carried []*model.Message
	for _, p := range m.Publishers {
		for _, pub := range p.Messages {
			if pub.AfterName != "" && !containsMsg(carried, pub.Message) {
				carried = append(carried, pub.Message)
			}
		}
	}
	name, about := delayGroup(m)
	id := ids.get("channel", "delay")
	chanID["delay"] = id
	doc.Channels[id] = &asyncChan{
		Address:     wire.DelayPrefix + ".*",
		Title:       "delay topology " + name,
		Description: about,
		Messages:    channelMessages(carried, msgID),
		Bindings: amqpChanBinding{amqpChannel{Is: "routingKey", BindingVersion: amqpBindingVersion,
			Exchange: &amqpExchange{Name: wire.DelayPrefix + ".*", Type: "topic", Durable: true, Vhost: vh}}},
	}
}

// delayOperation adds the send operation of a delayed message's After
// (and At) method, into the delay topology.
func delayOperation(doc *asyncDoc, ids *ids, chanID map[string]string, msgID map[*model.Message]string, p *model.Publisher, pub *model.Published) {
	ch := chanID["delay"]
	op := &asyncOp{
		Action:  "send",
		Channel: ref{"#/channels/" + ch},
		Title:   p.GoName + "." + pub.AfterName,
		Summary: fmt.Sprintf("Publishes %s (type %s) to be delivered to the exchange %s after a delay (also %s), mandatory and confirmed by the level that holds it.", pub.Message.Name, pub.Message.Type, p.ExchangeName(), pub.AtName),
		Description: "Into level ⌊log₂ s⌋ of the delay topology with the routing key of the delay's " + strconv.Itoa(wire.DelayLevels) +
			" bits and the exchange's name; the message's own routing key in its BCC header and in x-acemq-delay-routing-key, its due time in x-acemq-delay-until.",
		Messages: []ref{{"#/channels/" + ch + "/messages/" + msgID[pub.Message]}},
		Bindings: amqpOpBinding{amqpOperation{DeliveryMode: 2, Mandatory: true, Timestamp: true, BindingVersion: amqpBindingVersion}},
	}
	if pub.RoutingKey != "" {
		op.Bindings.AMQP.BCC = []string{pub.RoutingKey}
	}
	doc.Operations[ids.get("operation", p.GoName+"."+pub.AfterName)] = op
}
