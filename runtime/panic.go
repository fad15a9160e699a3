package runtime

import "github.com/acemq/acemq-go/runtime/internal/core"

// PanicError is a handler's panic, turned into a Retry. Its text — what
// x-acemq-error carries, and so a dead letter's reason once the attempts
// run out — is "handler panicked: <value> (at <function> <file>:<line>)",
// the frame where the panic was raised (Frame: outside Go's own runtime
// package, so a nil map write names the handler's line); Stack is the
// whole goroutine stack, which the consumer logs at Error.
type PanicError = core.PanicError
