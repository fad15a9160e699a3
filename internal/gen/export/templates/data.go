package templates

// Data is what every template is executed with: the topology as a graph
// (for the diagrams) and as lists (for the summary). Every list is in
// manifest order; every string is plain text, escaped by the template.
type Data struct {
	// Header is the "generated, do not edit" line, without comment marks.
	Header string
	// Title names the topology: the manifest's Go package.
	Title      string
	Graph      Graph
	Publishers []Publisher
	Exchanges  []Exchange
	Queues     []Queue
}

// Graph is the topology as nodes and edges, publishers → exchanges →
// queues → handlers, with the retry, dead-letter and parked paths.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Node kinds.
const (
	NodePublisher = "publisher"
	NodeExchange  = "exchange" // an exchange of the manifest, or the default exchange
	NodeQueue     = "queue"
	NodeHandler   = "handler"
	NodeRung      = "rung"   // q.retry.<N>s
	NodeDLQ       = "dlq"    // q.dlq
	NodeParked    = "parked" // q.parked
	NodeDLX       = "dlx"    // acemq.dlx
)

// Edge kinds.
const (
	EdgePublish          = "publish"            // publisher → exchange
	EdgeRoute            = "route"              // exchange → queue (a binding)
	EdgeConsume          = "consume"            // queue → handler
	EdgeRetryMemory      = "retry-memory"       // handler → queue: waits held in memory, then a republish
	EdgeRetryRung        = "retry-rung"         // handler → rung: a wait the broker holds
	EdgeRungReturn       = "rung-return"        // rung → queue, when the wait expires
	EdgeRequeue          = "requeue"            // handler → queue (requeue_on_failure)
	EdgeDeadLetter       = "dead-letter"        // handler → dlq: gave up, rejected
	EdgePark             = "park"               // handler → parked
	EdgeBrokerDeadLetter = "broker-dead-letter" // queue → acemq.dlx → dlq: the broker's own
	EdgeReply            = "reply"              // handler → publisher: a request's reply, to its reply_to
)

// Node is a box of the diagram. ID is made of letters and digits only.
type Node struct {
	ID, Label, Kind string
}

// Edge is an arrow of the diagram.
type Edge struct {
	From, To, Label, Kind string
}

// Publisher is a typed publisher of the manifest.
type Publisher struct {
	Name     string
	GoName   string // e.g. OrdersPublisher
	Exchange string // "" for the default exchange
	Messages []Published
}

// Published is one message a publisher sends.
type Published struct {
	Message, Type, RoutingKey string
}

// Exchange is an exchange the topology declares.
type Exchange struct {
	Name, Kind string
	// Topology is true for acemq.dlx and acemq.retry, which the topology
	// adds for its queues.
	Topology bool
	// From is the manifest an imported exchange is declared by (its
	// owner), "" for the manifest's own.
	From string
	// Delay, on the one entry that stands for the whole delay topology
	// (its 28 levels and its delivery exchange), is its queues' type and
	// About says what it is.
	Delay, About string
}

// Queue is an application queue with what the topology declares for it.
type Queue struct {
	Name, Type string // Type: classic or quorum
	Arguments  []Argument
	Bindings   []Binding
	Handler    string     // the handler interface, "" when the queue consumes nothing
	Consumes   []Consumed // what the handler is given
	Policy     *Policy    // nil: no retry (one delivery)
	// RequeueOnFailure: a failure goes back to the head of the queue.
	RequeueOnFailure bool
	// NativeRetry: retry_in_broker: native, the queue itself holds each
	// wait (RabbitMQ 4.3's delayed retry); no rungs.
	NativeRetry bool
	// DeadLetter: the broker dead-letters what it rejects or expires to
	// DLQ through acemq.dlx.
	DeadLetter    bool
	DeliveryLimit int // quorum queues: the broker dead-letters past it
	DLQ, Parked   string
	Rungs         []Rung
}

// Argument is an x-argument of a queue, its value as text.
type Argument struct {
	Key, Value string
}

// Binding binds the queue to an exchange.
type Binding struct {
	Exchange, RoutingKey string
}

// Consumed is a message type a queue's handler is given.
type Consumed struct {
	Name, Type string
	Format     string // Avro or JSON Schema
	Schema     string // the schema file as the manifest names it
	// Reply and ReplyType: the message a request is answered with, ""
	// when it is not a request.
	Reply, ReplyType string
}

// Policy is a queue's retry policy and its schedule.
type Policy struct {
	Name     string
	Shape    string // e.g. "exponential, 6 attempts, 10s doubling to 5m"
	Attempts int
	Waits    []Wait // attempts−1 of them
	Jitter   string // e.g. "±20%", "" for none
	// GiveUpAfter is the age past which a failure dead-letters, "" none.
	GiveUpAfter string
	// Threshold: waits at or above it are held by the broker.
	Threshold string
}

// Wait is the wait after a failed attempt: held in memory by the consumer
// (jittered), or by the broker in Rung.
type Wait struct {
	After string // the attempt that failed (1-based), or a range "3–9" of attempts followed by the same wait
	Delay string // e.g. 40s
	Rung  string // "" when held in memory
	// Spill is the rung a wait held in memory goes to once the
	// consumer's hold budget is full; "" when it has none.
	Spill string
}

// Rung is a retry rung: a queue holding messages for Delay.
type Rung struct {
	Name, Delay string
	Quorum      bool
	// Spill is a rung only for waits below the threshold, spilled past
	// the consumer's hold budget.
	Spill bool
}
