package manifest

// File is a parsed manifest. Optional values are nil when absent. Every
// list keeps the manifest's order.
type File struct {
	Path       string // as given to Parse, used in every error
	Version    Int
	Package    Str
	Policies   []*Policy
	Messages   []*Message
	Exchanges  []*Exchange
	Queues     []*Queue
	Publishers []*Publisher
	Exports    []*Export
	Registry   *Registry
	Names      *Names
}

// Names is the names: block, how Go names are made.
type Names struct {
	Pos         Pos   // the key's
	Initialisms *Bool // nil: Go's initialisms are on
	Add         []Str // a team's own initialisms
}

// Registry is the registry: block, the schema registry of the Avro types.
type Registry struct {
	Pos                                         Pos // the key's
	Directory, URL                              *Str
	UsernameEnv, PasswordEnv, TokenEnv, Timeout *Str
	LookupOnly                                  *Bool
}

// Str is a string and where it was written.
type Str struct {
	Value string
	Pos   Pos
}

// Int is an integer and where it was written.
type Int struct {
	Value int
	Pos   Pos
}

// Float is a number and where it was written.
type Float struct {
	Value float64
	Pos   Pos
}

// Bool is a boolean and where it was written.
type Bool struct {
	Value bool
	Pos   Pos
}

// Policy is an entry of policies:.
type Policy struct {
	Name             Str // the key; Pos is the key's position
	Exponential      *Exponential
	Fixed            *Fixed
	WaitInBrokerFrom *Str
	GiveUpAfter      *Str
	GoName           *Str
}

// Exponential is a policy's exponential: block.
type Exponential struct {
	Pos        Pos
	Attempts   Int
	Initial    Str
	Max        Str
	Multiplier *Float
	Jitter     *Float
}

// Fixed is a policy's fixed: block.
type Fixed struct {
	Pos      Pos
	Attempts Int
	Delay    Str
	Jitter   *Float
}

// Message is an entry of messages:.
type Message struct {
	Name    Str
	Type    Str
	Schema  Str
	Subject *Str
	Compat  *Str // full, backward, forward or none; nil: full
	GoName  *Str
	// FieldGoNames are field_go_names: a Go name by the JSON pointer of a
	// field in the schema, in manifest order.
	FieldGoNames []FieldGoName
}

// FieldGoName is one entry of a message's field_go_names.
type FieldGoName struct {
	Pointer Str // the key
	GoName  Str
}

// Exchange is an entry of exchanges:.
type Exchange struct {
	Name Str
	Type Str
}

// Queue is an entry of queues:.
type Queue struct {
	Name             Str
	Type             *Str
	DeadLetter       *Bool
	DeliveryLimit    *Int
	Retry            *Str
	Bindings         []*Binding
	Consumes         []Str
	RequeueOnFailure *Bool
	RungsType        *Str
	Arguments        []*Argument
	GoName           *Str
}

// Binding is one of a queue's bindings.
type Binding struct {
	Pos        Pos
	Exchange   Str
	RoutingKey *Str
}

// Argument is one of a queue's extra x-arguments. Value is a string, an
// int64, a float64 or a bool.
type Argument struct {
	Key   Str
	Value any
}

// Publisher is an entry of publishers:.
type Publisher struct {
	Name     Str
	Exchange *Str
	Messages []*Published
	GoName   *Str
}

// Published is one message of a publisher.
type Published struct {
	Message    Str
	RoutingKey *Str
}

// Export is an entry of exports:, a topology artifact written with the
// code.
type Export struct {
	Pos    Pos
	Format Str
	Path   Str
	Vhost  *Str
}
