package runtime

import "github.com/acemq/acemq-go/runtime/internal/core"

// Message is a decoded delivery handed to a handler.
type Message[T any] = core.Message[T]

// Handler handles one message type and says what happens next.
type Handler[T any] = core.Handler[T]

// Route binds a message type to its handler on a consumer. Make one with
// Handle.
type Route = core.Route

// Handle routes the messages of type mt (matched on the AMQP type
// property) to h. A message whose body mt's codec cannot decode never
// reaches h: it is parked with "could not be decoded: <why>". A panic in h
// is a Retry whose error is a *PanicError: its reason names the panic value
// and the file:line that raised it, and the consumer logs the stack at
// Error.
func Handle[T any](mt *MessageType[T], h Handler[T]) Route { return core.Handle(mt, h) }
