package consume

import (
	"context"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"

	amqp "github.com/rabbitmq/amqp091-go"
)

// delivery is one delivery in flight on a consumer, from the moment a
// worker (or a registry hold that comes back) starts processing it until
// it is settled: acked once its copy (if any) is confirmed, nacked back,
// or left to the broker. It goes through the stages in order, each in a
// file of its own (doc.go): received (receive.go), decoded (decode.go),
// handled (handle.go), settled (settle.go: acked in a batch, ackbatch.go;
// or its copy written first, retry.go and setaside.go; or held, hold.go).
// Each run of process has a delivery of its own: a delivery held for the
// registry is processed again as a new one.
type delivery struct {
	cs *Consumer
	// s is the session it came on: it can only be settled there.
	s   *session
	d   amqp.Delivery
	env core.Envelope
	// apps is the handler's Headers when begin knew them (none: an
	// empty map of its own), else nil (made from d's).
	apps map[string]any
	// lookup is the registry hold this run came back from, else nil.
	lookup *heldLookup
	// received is when serve took it from the session's channel.
	received time.Time
	// ahead is its decode, when it was decoded ahead of its run.
	ahead decoded
	// ctx is the handler's: the process span's, then with the decode
	// info (runCtx). aheadCtx is the decode ahead's.
	ctx              context.Context
	runCtx, aheadCtx core.InfoCtx
	span             obs.ProcessSpan
	began            time.Time
	// opts are its type's metric options and span name (decode.go).
	opts *typeOpts
	// requeueKey names the message across requeues, and requeues is its
	// count when the run began (requeue_on_failure only).
	requeueKey string
	requeues   int
}
