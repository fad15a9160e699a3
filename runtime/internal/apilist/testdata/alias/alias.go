// Package alias is the user package of apilist's alias test: its types
// are aliases of core's.
package alias

import (
	"time"

	"github.com/acemq/acemq-go/runtime/internal/apilist/testdata/alias/internal/core"
)

// Ack is core.Ack.
type Ack = core.Ack

// Kind is core.Kind.
type Kind = core.Kind

// Message is core.Message.
type Message[T any] = core.Message[T]

// Handler is core.Handler.
type Handler = core.Handler

// Duration is an alias outside the module: one line.
type Duration = time.Duration

// Own is defined here.
type Own struct{ N int }

// NewOwn is Own's constructor.
func NewOwn() *Own { return &Own{} }

// Get is Own's method.
func (o *Own) Get() int { return o.N }

// Accept is a function.
func Accept() Ack { return Ack{} }

// Accepts is a constant, not counted by go doc's entries.
const Accepts = 1
