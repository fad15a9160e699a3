package export

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime/wire"
)

// The AsyncAPI document, as typed structs: encoding/json escapes every
// name and sorts the maps (channels, operations, components by id).
type asyncDoc struct {
	AsyncAPI           string                `json:"asyncapi"`
	Info               asyncInfo             `json:"info"`
	DefaultContentType string                `json:"defaultContentType"`
	Channels           map[string]*asyncChan `json:"channels"`
	Operations         map[string]*asyncOp   `json:"operations"`
	Components         asyncComponents       `json:"components"`
}

type asyncInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type ref struct {
	Ref string `json:"$ref"`
}

type asyncChan struct {
	Address     string          `json:"address"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Messages    map[string]ref  `json:"messages"`
	Bindings    amqpChanBinding `json:"bindings"`
}

type amqpChanBinding struct {
	AMQP amqpChannel `json:"amqp"`
}

type amqpChannel struct {
	Is             string        `json:"is"`
	Exchange       *amqpExchange `json:"exchange,omitempty"`
	Queue          *amqpQueue    `json:"queue,omitempty"`
	BindingVersion string        `json:"bindingVersion"`
}

type amqpExchange struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Durable    bool   `json:"durable"`
	AutoDelete bool   `json:"autoDelete"`
	Vhost      string `json:"vhost"`
}

type amqpQueue struct {
	Name       string `json:"name"`
	Durable    bool   `json:"durable"`
	Exclusive  bool   `json:"exclusive"`
	AutoDelete bool   `json:"autoDelete"`
	Vhost      string `json:"vhost"`
}

type asyncOp struct {
	Action      string        `json:"action"`
	Channel     ref           `json:"channel"`
	Title       string        `json:"title,omitempty"`
	Summary     string        `json:"summary,omitempty"`
	Description string        `json:"description,omitempty"`
	Messages    []ref         `json:"messages"`
	Bindings    amqpOpBinding `json:"bindings"`
}

type amqpOpBinding struct {
	AMQP amqpOperation `json:"amqp"`
}

type amqpOperation struct {
	CC             []string `json:"cc,omitempty"`
	BCC            []string `json:"bcc,omitempty"`
	DeliveryMode   int      `json:"deliveryMode,omitempty"`
	Mandatory      bool     `json:"mandatory,omitempty"`
	Timestamp      bool     `json:"timestamp,omitempty"`
	Ack            bool     `json:"ack,omitempty"`
	BindingVersion string   `json:"bindingVersion"`
}

type asyncComponents struct {
	Messages map[string]*asyncMessage `json:"messages"`
	Schemas  map[string]any           `json:"schemas"`
}

type asyncMessage struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Summary     string         `json:"summary,omitempty"`
	ContentType string         `json:"contentType"`
	Headers     ref            `json:"headers"`
	Payload     any            `json:"payload"`
	Bindings    amqpMsgBinding `json:"bindings"`
}

type amqpMsgBinding struct {
	AMQP amqpMessage `json:"amqp"`
}

type amqpMessage struct {
	MessageType    string `json:"messageType"`
	BindingVersion string `json:"bindingVersion"`
}

// multiFormat is a Multi Format Schema Object: a payload in a schema
// language other than AsyncAPI's own.
type multiFormat struct {
	SchemaFormat string `json:"schemaFormat"`
	Schema       any    `json:"schema"`
}

const (
	amqpBindingVersion = "0.3.0"
	// AvroSchemaFormat is the schemaFormat of an Avro payload.
	AvroSchemaFormat = "application/vnd.apache.avro;version=1.9.0"
	headersSchema    = "AcemqHeaders"
)

// AsyncAPI is m's topology as an AsyncAPI 3.0 document: a channel for
// every queue and exchange Declare declares (with its AMQP channel
// binding), a send operation for each message of each publisher and a
// receive operation for each consuming queue (with their AMQP operation
// bindings), and a message for each message type of the manifest, its
// payload schema (Avro as a Multi Format Schema Object, JSON Schema
// inline) and the acemq headers.
func AsyncAPI(m *model.Model, opts Options) ([]byte, error) {
	d, err := Topology(m).Declarations()
	if err != nil {
		return nil, fmt.Errorf("export asyncapi: %w", err)
	}
	vh := opts.vhost()
	doc := &asyncDoc{
		AsyncAPI:           "3.0.0",
		Info:               asyncInfo{Title: m.Package, Version: "1", Description: opts.header() + " The queues, exchanges, messages, publishers and consumers of the acemq-go service package " + m.Package + ", with each queue's dead-letter queue (q.dlq), parked queue (q.parked) and retry rungs (q.retry.<N>s) of the acemq wire contract."},
		DefaultContentType: wire.ContentTypeJSON,
		Channels:           map[string]*asyncChan{},
		Operations:         map[string]*asyncOp{},
		Components:         asyncComponents{Messages: map[string]*asyncMessage{}, Schemas: map[string]any{headersSchema: acemqHeaders()}},
	}
	ids := newIDs()
	msgID := map[*model.Message]string{}
	for _, msg := range m.Messages {
		id := ids.get("message", msg.Name)
		msgID[msg] = id
		am, err := asyncMessageOf(msg, "/components/messages/"+id+"/payload")
		if err != nil {
			return nil, fmt.Errorf("export asyncapi: message %q: %w", msg.Name, err)
		}
		doc.Components.Messages[id] = am
	}

	// What each queue carries: the messages its consumer is given and
	// those publishers send it through the default exchange; its
	// dead-letter queue, parked queue and rungs carry the same.
	carries := map[string][]*model.Message{}
	add := func(name string, msgs ...*model.Message) {
		for _, msg := range msgs {
			if !containsMsg(carries[name], msg) {
				carries[name] = append(carries[name], msg)
			}
		}
	}
	for _, p := range m.Publishers {
		for _, pub := range p.Messages {
			if p.Exchange == nil {
				add("queue:"+pub.RoutingKey, pub.Message)
			} else {
				add("exchange:"+p.Exchange.Name, pub.Message)
			}
		}
	}
	for _, q := range m.Queues {
		add("queue:"+q.Name, q.Consumes...)
		all := carries["queue:"+q.Name]
		add("queue:"+wire.DeadLetterQueue(q.Name), all...)
		add("queue:"+wire.ParkedQueue(q.Name), all...)
		if q.Retry != nil {
			for _, r := range wire.Rungs(wire.Waits(q.Retry.Value.Attempts(), q.Retry.Value.Delay), q.Retry.Value.WaitInBrokerFrom()) {
				add("queue:"+wire.RungQueue(q.Name, r), all...)
				add("exchange:"+wire.RetryExchange, all...)
			}
		}
		if q.DeadLetter {
			add("exchange:"+wire.DeadLetterExchange, all...)
		}
	}
	roles := queueRoles(m)

	chanID := map[string]string{}
	for _, x := range d.Exchanges {
		if inDelayTopology(x.Name) {
			continue // one channel for the group, below
		}
		key := "exchange:" + x.Name
		id := ids.get("channel", "exchange."+x.Name)
		chanID[key] = id
		doc.Channels[id] = &asyncChan{
			Address:     x.Name,
			Title:       "exchange " + x.Name,
			Description: exchangeDescription(x.Name, x.Kind),
			Messages:    channelMessages(carries[key], msgID),
			Bindings: amqpChanBinding{amqpChannel{Is: "routingKey", BindingVersion: amqpBindingVersion,
				Exchange: &amqpExchange{Name: x.Name, Type: x.Kind, Durable: true, Vhost: vh}}},
		}
	}
	if m.Delay != "" {
		delayChannel(doc, m, ids, chanID, msgID, vh)
	}
	for _, q := range d.Queues {
		if inDelayTopology(q.Name) {
			continue
		}
		key := "queue:" + q.Name
		id := ids.get("channel", "queue."+q.Name)
		chanID[key] = id
		doc.Channels[id] = &asyncChan{
			Address:     q.Name,
			Title:       "queue " + q.Name,
			Description: roles[q.Name],
			Messages:    channelMessages(carries[key], msgID),
			Bindings: amqpChanBinding{amqpChannel{Is: "queue", BindingVersion: amqpBindingVersion,
				Queue: &amqpQueue{Name: q.Name, Durable: true, Vhost: vh}}},
		}
	}

	for _, p := range m.Publishers {
		key := "exchange:" + p.ExchangeName()
		for _, pub := range p.Messages {
			if p.Exchange == nil {
				key = "queue:" + pub.RoutingKey
			}
			ch := chanID[key]
			method, summary := pub.Method, fmt.Sprintf("Publishes %s (type %s), mandatory and confirmed.", pub.Message.Name, pub.Message.Type)
			if r := pub.Message.Reply; r != nil {
				method = pub.RequestName
				summary = fmt.Sprintf("Sends %s (type %s) as a request, mandatory, and waits for its reply %s (type %s), which the responder publishes to the request's reply_to (direct reply-to, or the requester's reply queue) with its correlation_id.",
					pub.Message.Name, pub.Message.Type, r.Name, r.Type)
			}
			op := &asyncOp{
				Action:   "send",
				Channel:  ref{"#/channels/" + ch},
				Title:    p.GoName + "." + method,
				Summary:  summary,
				Messages: []ref{{"#/channels/" + ch + "/messages/" + msgID[pub.Message]}},
				Bindings: amqpOpBinding{amqpOperation{DeliveryMode: 2, Mandatory: true, Timestamp: true, BindingVersion: amqpBindingVersion}},
			}
			if pub.Message.Reply != nil {
				op.Bindings.AMQP.DeliveryMode = 1 // a request lives no longer than its caller waits
			}
			if pub.RoutingKey != "" {
				op.Bindings.AMQP.CC = []string{pub.RoutingKey}
			}
			if p.Exchange == nil {
				op.Description = "Through the default exchange, to the queue " + pub.RoutingKey + "."
			}
			doc.Operations[ids.get("operation", p.GoName+"."+method)] = op
			if pub.AfterName != "" {
				delayOperation(doc, ids, chanID, msgID, p, pub)
			}
		}
	}
	for _, q := range m.Queues {
		if q.ConsumeName == "" {
			continue
		}
		ch := chanID["queue:"+q.Name]
		op := &asyncOp{
			Action:      "receive",
			Channel:     ref{"#/channels/" + ch},
			Title:       q.ConsumeName,
			Summary:     fmt.Sprintf("Consumes %s with %s.", q.Name, q.HandlerName),
			Description: consumeDescription(q),
			Bindings:    amqpOpBinding{amqpOperation{Ack: true, BindingVersion: amqpBindingVersion}},
		}
		for _, msg := range q.Consumes {
			op.Messages = append(op.Messages, ref{"#/channels/" + ch + "/messages/" + msgID[msg]})
		}
		doc.Operations[ids.get("operation", q.ConsumeName)] = op
	}
	return marshal(doc)
}

func containsMsg(list []*model.Message, m *model.Message) bool {
	for _, x := range list {
		if x == m {
			return true
		}
	}
	return false
}

func channelMessages(msgs []*model.Message, ids map[*model.Message]string) map[string]ref {
	out := map[string]ref{}
	for _, m := range msgs {
		out[ids[m]] = ref{"#/components/messages/" + ids[m]}
	}
	return out
}

func asyncMessageOf(m *model.Message, at string) (*asyncMessage, error) {
	am := &asyncMessage{
		Name:     m.Name,
		Title:    m.GoName,
		Summary:  "AMQP type " + m.Type + ", schema " + m.SchemaPath + ".",
		Headers:  ref{"#/components/schemas/" + headersSchema},
		Bindings: amqpMsgBinding{amqpMessage{MessageType: m.Type, BindingVersion: amqpBindingVersion}},
	}
	if m.Format == schema.Avro {
		am.ContentType = wire.ContentTypeAvro
		var v any
		if err := decodeNumbers(m.SchemaText, &v); err != nil {
			return nil, err
		}
		am.Payload = multiFormat{SchemaFormat: AvroSchemaFormat, Schema: v}
		return am, nil
	}
	am.ContentType = wire.ContentTypeJSON
	v, err := pointerSchema(m.SchemaText, at)
	if err != nil {
		return nil, err
	}
	am.Payload = v
	return am, nil
}

func decodeNumbers(text string, v any) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	return dec.Decode(v)
}

// acemqHeaders is the schema of the headers the runtime writes (the wire
// contract's x-acemq-* and the replay stamps).
func acemqHeaders() any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return map[string]any{
		"type":        "object",
		"description": "The acemq headers. Every other header is the application's.",
		"properties": map[string]any{
			wire.HeaderID:           str("The message's id, kept for life (also the message_id property)."),
			wire.HeaderAttempt:      map[string]any{"type": "integer", "minimum": 1, "description": "The attempt this delivery is, 1-based; absent is 1. Written as a 64-bit integer."},
			wire.HeaderFirstSeen:    map[string]any{"type": "string", "format": "date-time", "description": "When the message was first published: RFC 3339, UTC, milliseconds."},
			wire.HeaderOrigin:       str("Who first published it: <program>@<host> unless set."),
			wire.HeaderError:        str("The last failure's reason; on a dead letter or a parked message the prefixed reason, e.g. \"gave up after 4 attempts: <reason>\"."),
			wire.HeaderQueue:        str("On a dead letter or a parked message: the queue it came from (replay sends it back there)."),
			wire.HeaderReplayedFrom: str("Set by replay: the queue the message was replayed from."),
			wire.HeaderReplayedAt:   map[string]any{"type": "string", "format": "date-time", "description": "Set by replay: when."},
			wire.HeaderReplayCount:  map[string]any{"type": "integer", "minimum": 1, "description": "Set by replay: how many times the message has been replayed."},
		},
	}
}

func exchangeDescription(name, kind string) string {
	switch name {
	case wire.DeadLetterExchange:
		return "Declared by the topology: routes what the broker dead-letters on its own (a rejection from outside, a TTL, a length limit, a quorum queue's delivery limit) to <queue>.dlq."
	case wire.RetryExchange:
		return "Declared by the topology: binds every retry rung under its own name, for tools. The consumer publishes to rungs by name through the default exchange."
	}
	return "A " + kind + " exchange of the manifest."
}

// queueRoles says what each queue Declare declares is for.
func queueRoles(m *model.Model) map[string]string {
	out := map[string]string{}
	for _, q := range m.Queues {
		desc := "A " + string(q.Type) + " queue of the manifest."
		if q.DeadLetter {
			desc += " The broker dead-letters to " + wire.DeadLetterQueue(q.Name) + " through " + wire.DeadLetterExchange + "."
		}
		if q.DeliveryLimit > 0 {
			desc += fmt.Sprintf(" Delivery limit %d.", q.DeliveryLimit)
		}
		out[q.Name] = desc
		out[wire.DeadLetterQueue(q.Name)] = "Dead letters of " + q.Name + ": what its consumer gave up on or rejected, and what the broker dead-lettered. x-acemq-error says why, x-acemq-queue where from."
		out[wire.ParkedQueue(q.Name)] = "Parked messages of " + q.Name + ": parked by the handler, or a body that could not be decoded (an unknown type, an invalid payload)."
		if q.Retry != nil {
			for _, r := range wire.BrokerRungs(wire.Waits(q.Retry.Value.Attempts(), q.Retry.Value.Delay), q.Retry.Value.WaitInBrokerFrom()) {
				out[wire.RungQueue(q.Name, r)] = fmt.Sprintf("Retry rung of %s: holds a message %s (x-message-ttl), then dead-letters it back to %s through the default exchange.", q.Name, short(r), q.Name)
			}
			for _, r := range wire.SpillRungs(wire.Waits(q.Retry.Value.Attempts(), q.Retry.Value.Delay), q.Retry.Value.WaitInBrokerFrom()) {
				out[wire.RungQueue(q.Name, r)] = fmt.Sprintf("Spill rung of %s: holds a message %s (x-message-ttl), then dead-letters it back to %s through the default exchange; its consumer sends a wait held in memory here once its hold budget is full.", q.Name, short(r), q.Name)
			}
		}
	}
	return out
}

func consumeDescription(q *model.Queue) string {
	tq := queueData(q)
	s := "Acks only once the outcome is safe. "
	if p := tq.Policy; p != nil {
		s += "Retry policy " + p.Name + ": " + p.Shape + "; waits"
		for i, w := range p.Waits {
			if i > 0 {
				s += ","
			}
			s += " " + w.Delay
			if w.Rung != "" {
				s += " (in " + w.Rung + ")"
			} else if w.Spill != "" {
				s += " (in memory; past the hold budget in " + w.Spill + ")"
			}
		}
		s += ". "
	}
	return s + "Failures go to " + tq.DLQ + ", parked and undecodable messages to " + tq.Parked + "."
}

// ids makes AsyncAPI ids (letters, digits, ., - and _) from names, one
// distinct id per name within each kind.
type ids struct {
	byName map[string]string
	taken  map[string]bool
}

func newIDs() *ids { return &ids{byName: map[string]string{}, taken: map[string]bool{}} }

func (x *ids) get(kind, name string) string {
	key := kind + "\x00" + name
	if id, ok := x.byName[key]; ok {
		return id
	}
	base := idOf(name)
	id := base
	for n := 2; x.taken[kind+"\x00"+id]; n++ {
		id = fmt.Sprintf("%s_%d", base, n)
	}
	x.taken[kind+"\x00"+id] = true
	x.byName[key] = id
	return id
}

// idOf keeps ASCII letters, digits, '.', '-' and '_', and writes any other
// character as _uXXXX.
func idOf(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_u%04X", r)
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
