package model

import (
	"time"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime"
)

// Model is a manifest resolved and validated. Every list keeps manifest
// order.
type Model struct {
	Source     string // the manifest path as given, for errors
	Package    string // Go package name
	Policies   []*Policy
	Messages   []*Message
	Exchanges  []*Exchange
	Queues     []*Queue
	Publishers []*Publisher
	Exports    []*Export        // exports:, in manifest order
	Registry   *Registry        // registry:, nil when absent
	Types      *schema.Universe // every Go type the messages need
	// TablePrefix is table_prefix:, "" when absent (pgstore's default).
	TablePrefix string
	// Delay is the queue type of the delay topology's levels, classic or
	// quorum (delay_levels:), when a publisher message has delay: true;
	// "" when none has: Topology() then declares no delay topology.
	Delay string
}

// Registry is the manifest's registry: block.
type Registry struct {
	GoName                             string // the exported func returning it, SchemaRegistry
	VarName                            string // the unexported variable holding it, schemaRegistry
	Directory, URL                     string // one of them is set
	UsernameEnv, PasswordEnv, TokenEnv string
	Timeout                            time.Duration
	LookupOnly                         bool
}

// PolicyKind is the shape of a retry policy.
type PolicyKind int

const (
	// Exponential waits initial, then multiplier times the last, up to max.
	Exponential PolicyKind = iota
	// Fixed waits the same delay between attempts.
	Fixed
)

// Policy is a retry policy of the manifest.
type Policy struct {
	Name    string
	GoName  string // the exported func returning it, e.g. StandardPolicy
	VarName string // the unexported variable holding it, e.g. standardPolicy
	Kind    PolicyKind
	// Attempts, Initial and Max are the constructor's arguments (Fixed
	// uses Initial as its delay).
	Attempts     int
	Initial, Max time.Duration
	// Multiplier and Jitter are set only when the manifest says so.
	Multiplier, Jitter *float64
	// WaitInBrokerFrom is set only when the manifest says so.
	WaitInBrokerFrom *time.Duration
	GiveUpAfter      time.Duration
	// Value is the policy as the runtime will see it.
	Value runtime.RetryPolicy
}

// Message is a message type of the manifest.
type Message struct {
	Name    string // manifest name
	GoName  string // the payload type, e.g. OrderPlaced
	VarName string // the unexported *runtime.MessageType variable, e.g. orderPlacedType
	// TypeFunc is the exported func returning VarName, e.g.
	// TypeOfOrderPlaced: a prefix, so that no type a schema names
	// (OrderPlacedType, the enum of OrderPlaced's type property) can want it.
	TypeFunc string
	// DecodeFunc decodes a pulled delivery (a dead letter) as the payload,
	// e.g. DecodeOrderPlaced.
	DecodeFunc  string
	SchemaConst string // the schema text constant, e.g. orderPlacedSchema
	// CheckFunc is the unexported func that checks a JSON Schema
	// payload in plain Go (acemqimpl.JSONChecker), e.g.
	// acemqCheckOrderCancelled; "" for an Avro message.
	CheckFunc string
	// ShapeFunc is the unexported func returning the decode shape of a
	// JSON Schema payload (acemqimpl.JSONFuncs.Check), e.g.
	// acemqShapeOrderCancelled; "" for an Avro message.
	ShapeFunc string
	// EncodeFunc is the unexported func that encodes a JSON Schema
	// payload as json.Marshal does, without reflection
	// (acemqimpl.JSONEncoder), e.g. acemqEncodeOrderCancelled; "" for an
	// Avro message.
	EncodeFunc string
	// JSONDecodeFunc is the unexported func that decodes a JSON Schema
	// payload in one pass, as json.Unmarshal does and checking its decode
	// shape (acemqimpl.JSONDecodeFunc), e.g. acemqDecodeOrderCancelled;
	// "" for an Avro message.
	JSONDecodeFunc string
	// HandlerMethod is the method of a queue's handler interface that
	// takes this message, e.g. HandleOrderPlaced.
	HandlerMethod string
	// Reply is the message that answers this one (the manifest's reply:),
	// nil for a message that is not a request.
	Reply      *Message
	Type       string        // AMQP type property
	Format     schema.Format // Avro or JSONSchema
	Subject    string        // registry subject (Avro)
	Compat     CompatMode    // what acemq-gen compat checks (default CompatFull)
	SchemaPath string        // as written in the manifest; an imported message's joined to its manifest's directory (../orders/schemas/x.json) or module (github.com/acme/orders@v1.4.0/schemas/x.json)
	SchemaText string        // the schema file, compacted
	Root       *schema.Type  // the payload type in Types
	// From is the manifest an imported message is declared in, as this
	// manifest names it (../orders/acemq.yaml, whatever the working
	// directory); "" for a message of this manifest.
	From string

	dir        string                 // the directory (in the input's fs.FS) of the manifest that declares it
	file       string                 // its schema: as that manifest writes it
	src        string                 // that manifest, as errors name it
	imported   *importSite            // nil for a message of this manifest
	schemaData []byte                 // the file as read
	refFiles   []string               // the files its bundled schema embeds
	fieldNames []manifest.FieldGoName // field_go_names
}

// CompatMode is what acemq-gen compat requires of a message's new schema
// against its previous version.
type CompatMode string

const (
	// CompatFull requires both directions: the default, because in a queue
	// producers deploy ahead of consumers while old messages wait in
	// dead-letter queues and rungs to be replayed to new consumers.
	CompatFull CompatMode = "full"
	// CompatBackward requires that new readers read old messages.
	CompatBackward CompatMode = "backward"
	// CompatForward requires that old readers read new messages.
	CompatForward CompatMode = "forward"
	// CompatNone checks nothing.
	CompatNone CompatMode = "none"
)

// Exchange is an exchange of the manifest.
type Exchange struct {
	Name string
	Kind string // direct, topic, fanout or headers
	// From is the manifest an imported exchange is declared in (this
	// service's Topology declares it too: the declaration is idempotent,
	// so neither service must start first); "" for one of this manifest.
	From string
}

// Queue is a queue of the manifest.
type Queue struct {
	Name             string
	GoName           string // e.g. OrdersNew
	Type             runtime.QueueType
	DeadLetter       bool
	DeliveryLimit    int     // quorum queues: delivery_limit, or wire.DefaultDeliveryLimit; 0 for classic
	Retry            *Policy // nil: none in the manifest
	Bindings         []*Binding
	Consumes         []*Message
	RequeueOnFailure bool // requeue_on_failure, or retry_in_broker: native
	QuorumRungs      bool
	// NativeRetry is retry_in_broker: native (runtime.Queue.NativeRetry).
	NativeRetry bool
	Arguments   []*Argument
	HandlerName string // e.g. OrdersNewHandler; set when Consumes is not empty
	ConsumeName string // e.g. ConsumeOrdersNew; set when Consumes is not empty
	// HandlerFuncName is the func adapter of a handler of one message type,
	// e.g. OrdersNewHandlerFunc; set when Consumes holds one message.
	HandlerFuncName string
	// Inbox is set when the manifest gives the queue an inbox: block.
	Inbox *Inbox
}

// Inbox is a queue's inbox: its handlers take the pgx.Tx of pgstore's
// inbox.
type Inbox struct {
	Retention time.Duration // 0: pgstore.DefaultRetention
}

// Binding binds a queue to an exchange.
type Binding struct {
	Exchange   *Exchange
	RoutingKey string
}

// Argument is an extra x-argument of a queue. Value is a string, an int
// (a value that fits in 32 bits), an int64 (one that does not: the
// generated code then says int64(...), which compiles on 32-bit platforms
// and which AMQP writes as 64 bits, where an int is written as 32), a
// float64 or a bool.
type Argument struct {
	Key   string
	Value any
}

// Publisher is a typed publisher of the manifest.
type Publisher struct {
	Name     string
	GoName   string    // the struct, e.g. OrdersPublisher
	NewName  string    // the constructor, e.g. NewOrdersPublisher
	Exchange *Exchange // nil: the default exchange
	Messages []*Published
	// Outbox: the manifest's outbox: true; OutboxName and NewOutboxName
	// are then its outbox writer and that one's constructor, e.g.
	// OrdersOutbox, NewOrdersOutbox.
	Outbox                    bool
	OutboxName, NewOutboxName string
	// Requests is whether any of Messages is a request: the publisher
	// then holds a runtime.Requester, and has a Close method.
	Requests bool
}

// HasOutbox reports whether any publisher of m writes to an outbox.
func (m *Model) HasOutbox() bool {
	for _, p := range m.Publishers {
		if p.Outbox {
			return true
		}
	}
	return false
}

// ExchangeName is the name publishes go to, "" for the default exchange.
func (p *Publisher) ExchangeName() string {
	if p.Exchange == nil {
		return ""
	}
	return p.Exchange.Name
}

// Published is one message a publisher publishes.
type Published struct {
	Message    *Message
	RoutingKey string // default routing key, "" for none
	Method     string // e.g. PublishOrderPlaced
	BatchName  string // e.g. PublishOrderPlacedBatch
	AsyncName  string // e.g. PublishOrderPlacedAsync
	TxName     string // e.g. PublishOrderPlacedTx, with the publisher's outbox
	// AfterName and AtName are the delayed forms (delay: true), e.g.
	// PublishOrderPlacedAfter and PublishOrderPlacedAt; AfterTxName and
	// AtTxName their outbox forms, with the publisher's outbox.
	AfterName, AtName, AfterTxName, AtTxName string
	// RequestName is the method of a request (a message with a reply),
	// e.g. RequestQuoteRequested, which replaces the three above.
	RequestName string
}
