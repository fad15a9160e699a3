// Package amqpx is the AMQP plumbing under amqp091-go that the runtime
// adds: the confirm channel's publisher (a writer that batches, matches
// returns and confirms, settles each publish once), corked writes on the
// socket, frame sizing and the header filter (a header table amqp091-go
// cannot read never closes the connection), round trips bounded by a ctx
// (CallChannel), the dialer's watch of a broken handshake and its
// capability rewrite, the AMQP checks of a message (short strings, field
// types) and the errors of a publish or a declaration the broker refused.
// Package runtime's Connection drives it; nothing here imports runtime.
package amqpx
