// Package core defines the types package alias re-exports.
package core

import "time"

// Ack is a struct aliased by the user package.
type Ack struct {
	Kind   Kind
	Reason string
	Delay  time.Duration
	Meta          // embedded, exported
	hidden string // unexported: not listed
}

// Meta is embedded in Ack and not aliased.
type Meta struct{ Note string }

// Kind is a named scalar with methods, aliased.
type Kind int

// String names the kind.
func (k Kind) String() string { return "" }

// Message is generic, aliased generically.
type Message[T any] struct {
	Body T
	Ack  *Ack
}

// Payload returns the body.
func (m *Message[T]) Payload() T { return m.Body }

// Settle settles with a, returning the meta.
func (m *Message[T]) Settle(a Ack) (Meta, error) { return a.Meta, nil }

func (m *Message[T]) internal() {}

// Handler is an interface, aliased.
type Handler interface {
	Handle(m *Message[string]) Ack
	Kind() Kind
	unexported()
}

// NotAliased is not aliased: its methods are not listed.
type NotAliased struct{ X int }

// M is a method of a type not aliased.
func (NotAliased) M() {}
