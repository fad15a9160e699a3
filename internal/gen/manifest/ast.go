package manifest

// The tree below is the one place that lists the manifest's keys on the Go
// side: each field's yaml tag names the key of schemas/manifest.schema.json
// it is read from, and decode.go reads every tagged field the same way, by
// reflection (TestSchemaKeysReachTheTree proves the two agree). A tag is
//
//	yaml:"name"   the value of the key name of the mapping
//	yaml:",key"   the key under which this entry of a mapping is written
//	              (a Str), in a slice read from a mapping
//	yaml:",value" the value of that entry, when it is not itself a mapping
//	yaml:",pos"   where this value was written: its key's position, or for
//	              an item of a list, the item's
//	yaml:"-"      not read from the manifest
//
// A slice of a struct with a ,key field is read from a mapping, in the
// order written; any other slice from a list.

// File is a parsed manifest. Optional values are nil when absent. Every
// list keeps the manifest's order.
type File struct {
	Path    string `yaml:"-"` // as given to Parse, used in every error
	Version Int    `yaml:"version"`
	Package Str    `yaml:"package"`
	// Imports are imports:, the other manifests whose messages and
	// exchanges this one uses, in manifest order.
	Imports    []*Import    `yaml:"imports"`
	Policies   []*Policy    `yaml:"policies"`
	Messages   []*Message   `yaml:"messages"`
	Exchanges  []*Exchange  `yaml:"exchanges"`
	Queues     []*Queue     `yaml:"queues"`
	Publishers []*Publisher `yaml:"publishers"`
	Exports    []*Export    `yaml:"exports"`
	Registry   *Registry    `yaml:"registry"`
	Names      *Names       `yaml:"names"`
	// TypeGoNames are type_go_names: a Go name by the place of a type in
	// the schemas ("<schema path>#<JSON pointer>"), or by its Avro full
	// name, in manifest order.
	TypeGoNames []TypeGoName `yaml:"type_go_names"`
	// SchemaVocabulary is schema_vocabulary: the JSON Schema keywords and
	// formats of a team's own, which the generator accepts beside the
	// drafts'.
	SchemaVocabulary *SchemaVocabulary `yaml:"schema_vocabulary"`
	// TablePrefix is table_prefix: the prefix of pgstore's tables (the
	// inbox's and the outbox's) this service's generated code expects.
	TablePrefix *Str `yaml:"table_prefix"`
	// DelayLevels is delay_levels: the queue type of the delay topology's
	// levels (classic, the default, or quorum), declared by Topology()
	// when a publisher delays a message.
	DelayLevels *Str `yaml:"delay_levels"`
}

// SchemaVocabulary is the schema_vocabulary: block.
type SchemaVocabulary struct {
	Pos      Pos   `yaml:",pos"` // the key's
	Keywords []Str `yaml:"keywords"`
	Formats  []Str `yaml:"formats"`
}

// TypeGoName is one entry of type_go_names.
type TypeGoName struct {
	Key    Str `yaml:",key"`
	GoName Str `yaml:",value"`
}

// Names is the names: block, how Go names are made.
type Names struct {
	Pos         Pos   `yaml:",pos"`        // the key's
	Initialisms *Bool `yaml:"initialisms"` // nil: Go's initialisms are on
	Add         []Str `yaml:"add"`         // a team's own initialisms
}

// Registry is the registry: block, the schema registry of the Avro types.
type Registry struct {
	Pos         Pos   `yaml:",pos"` // the key's
	Directory   *Str  `yaml:"directory"`
	URL         *Str  `yaml:"url"`
	UsernameEnv *Str  `yaml:"username_env"`
	PasswordEnv *Str  `yaml:"password_env"`
	TokenEnv    *Str  `yaml:"token_env"`
	Timeout     *Str  `yaml:"timeout"`
	LookupOnly  *Bool `yaml:"lookup_only"`
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

// Import is an entry of imports:: another manifest, by path or by Go
// module, whose message declarations (and exchanges) this one uses.
type Import struct {
	Pos      Pos   `yaml:",pos"` // the item's
	Path     *Str  `yaml:"path"`
	Module   *Str  `yaml:"module"`
	Version  *Str  `yaml:"version"`
	Manifest *Str  `yaml:"manifest"` // module only; nil: acemq.yaml
	Messages []Str `yaml:"messages"` // nil: every message it declares
}

// Policy is an entry of policies:.
type Policy struct {
	Name             Str          `yaml:",key"` // Pos is the key's position
	Exponential      *Exponential `yaml:"exponential"`
	Fixed            *Fixed       `yaml:"fixed"`
	WaitInBrokerFrom *Str         `yaml:"wait_in_broker_from"`
	GiveUpAfter      *Str         `yaml:"give_up_after"`
	GoName           *Str         `yaml:"go_name"`
}

// Exponential is a policy's exponential: block.
type Exponential struct {
	Pos        Pos    `yaml:",pos"`
	Attempts   Int    `yaml:"attempts"`
	Initial    Str    `yaml:"initial"`
	Max        Str    `yaml:"max"`
	Multiplier *Float `yaml:"multiplier"`
	Jitter     *Float `yaml:"jitter"`
}

// Fixed is a policy's fixed: block.
type Fixed struct {
	Pos      Pos    `yaml:",pos"`
	Attempts Int    `yaml:"attempts"`
	Delay    Str    `yaml:"delay"`
	Jitter   *Float `yaml:"jitter"`
}

// Message is an entry of messages:.
type Message struct {
	Name    Str  `yaml:",key"`
	Type    Str  `yaml:"type"`
	Schema  Str  `yaml:"schema"`
	Subject *Str `yaml:"subject"`
	Compat  *Str `yaml:"compat"` // full, backward, forward or none; nil: full
	GoName  *Str `yaml:"go_name"`
	// Reply names the message that answers this one: a request, sent by
	// a generated Request method and answered by a handler that returns
	// the reply (docs/request-reply.md).
	Reply *Str `yaml:"reply"`
	// FieldGoNames are field_go_names: a Go name by the JSON pointer of a
	// field in the schema, in manifest order.
	FieldGoNames []FieldGoName `yaml:"field_go_names"`
}

// FieldGoName is one entry of a message's field_go_names.
type FieldGoName struct {
	Pointer Str `yaml:",key"`
	GoName  Str `yaml:",value"`
}

// Exchange is an entry of exchanges:.
type Exchange struct {
	Name Str `yaml:",key"`
	Type Str `yaml:"type"`
}

// Queue is an entry of queues:.
type Queue struct {
	Name             Str         `yaml:",key"`
	Type             *Str        `yaml:"type"`
	DeadLetter       *Bool       `yaml:"dead_letter"`
	DeliveryLimit    *Int        `yaml:"delivery_limit"`
	Retry            *Str        `yaml:"retry"`
	Bindings         []*Binding  `yaml:"bindings"`
	Consumes         []Str       `yaml:"consumes"`
	Reply            *Str        `yaml:"reply"` // the answer to every message it consumes: each is a request
	RequeueOnFailure *Bool       `yaml:"requeue_on_failure"`
	Rungs            *Rungs      `yaml:"rungs"`
	RetryInBroker    *Str        `yaml:"retry_in_broker"` // rungs (nil) or native
	Inbox            *Inbox      `yaml:"inbox"`
	Arguments        []*Argument `yaml:"arguments"`
	GoName           *Str        `yaml:"go_name"`
}

// Rungs is a queue's rungs: block, how its retry rungs are declared.
type Rungs struct {
	Pos  Pos  `yaml:",pos"`
	Type *Str `yaml:"type"` // classic or quorum; nil: classic
}

// Inbox is a queue's inbox: block: its handlers run through pgstore's
// inbox on PostgreSQL.
type Inbox struct {
	Pos       Pos  `yaml:",pos"`
	Retention *Str `yaml:"retention"` // nil: pgstore.DefaultRetention
}

// Binding is one of a queue's bindings.
type Binding struct {
	Pos        Pos  `yaml:",pos"`
	Exchange   Str  `yaml:"exchange"`
	RoutingKey *Str `yaml:"routing_key"`
}

// Argument is one of a queue's extra x-arguments. Value is a string, an
// int64, a float64 or a bool.
type Argument struct {
	Key   Str `yaml:",key"`
	Value any `yaml:",value"`
}

// Publisher is an entry of publishers:.
type Publisher struct {
	Name     Str          `yaml:",key"`
	Exchange *Str         `yaml:"exchange"`
	Messages []*Published `yaml:"messages"`
	GoName   *Str         `yaml:"go_name"`
	Outbox   *Bool        `yaml:"outbox"`
}

// Published is one message of a publisher.
type Published struct {
	Message    Str   `yaml:",key"`
	RoutingKey *Str  `yaml:"routing_key"`
	Delay      *Bool `yaml:"delay"` // Publish<M>After and …At (runtime.WithDelay)
}

// Export is an entry of exports:, a topology artifact written with the
// code.
type Export struct {
	Pos    Pos  `yaml:",pos"`
	Format Str  `yaml:"format"`
	Path   Str  `yaml:"path"`
	Vhost  *Str `yaml:"vhost"`
}
