package consume

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/codec"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// testConn is the engine's tests' connection (package runtime's adapter
// is the real one): the default codecs, the global tracer provider, and
// with pub the consumers' confirm channel on a broker, else none; with
// amqp its connection to the broker, which its consumers subscribe on.
type testConn struct {
	codecs  core.CodecChoice
	tracers obs.Tracers
	pub     *amqpx.Publisher
	amqp    *amqp.Connection
	quorum  QuorumQueues
	native  NativeQueues
}

func newTestConn() *testConn {
	return &testConn{codecs: core.CodecChoice{Default: codec.NewFingerprintRegistry()}}
}

// testConfig is cfg on a testConn (a new one when tc is nil), with the
// global meter provider's metrics and a discarding logger.
func testConfig(cfg Config, tc *testConn) Config {
	if tc == nil {
		tc = newTestConn()
	}
	cfg.Conn, cfg.Metrics, cfg.Log = tc, obs.NewMetrics(otel.GetMeterProvider()), slog.New(slog.DiscardHandler)
	cfg.Quorum, cfg.Native = &tc.quorum, &tc.native
	return cfg
}

// testTextType is a text message type, as runtime.NewTextType makes it.
func testTextType(name string) *msgtype.MessageType[string] {
	return msgtype.New[string](name, msgtype.FormatText, "", "", nil, codec.Codecs{})
}

var errNoBroker = errors.New("testConn: no broker")

func (t *testConn) Codecs() *core.CodecChoice                         { return &t.codecs }
func (t *testConn) Tracer() (trace.Tracer, bool)                      { return t.tracers.Tracer(nil) }
func (t *testConn) BlockedNote() string                               { return "" }
func (t *testConn) CorkOf(*amqp.Connection) *amqpx.CorkConn           { return nil }
func (t *testConn) UpSignal() <-chan struct{}                         { return make(chan struct{}) }
func (t *testConn) Untrack(*Consumer)                                 {}
func (t *testConn) Closed() bool                                      { return false }
func (t *testConn) DialOwn(context.Context) (*amqp.Connection, error) { return nil, errNoBroker }
func (t *testConn) ChannelOn(context.Context) (*amqp.Channel, *amqp.Connection, error) {
	if t.amqp == nil {
		return nil, nil, errNoBroker
	}
	ch, err := t.amqp.Channel()
	return ch, t.amqp, err
}
func (t *testConn) NewChannel(_ context.Context, conn *amqp.Connection) (*amqp.Channel, error) {
	if conn == nil {
		return nil, errNoBroker
	}
	return conn.Channel()
}

// SetAside writes o on pub and waits for its confirm.
func (t *testConn) SetAside(ctx context.Context, o amqpx.Outgoing) error {
	done := make(chan error, 1)
	if err := t.PublishThen(ctx, o, func(err error) { done <- err }, nil); err != nil {
		return err
	}
	return <-done
}

// PublishThen queues o on pub, as package runtime's publishThen does
// after its span and its exchange check.
func (t *testConn) PublishThen(ctx context.Context, o amqpx.Outgoing, then func(error), arrived *atomic.Bool) error {
	if t.pub == nil {
		then(errNoBroker)
		return errNoBroker
	}
	f := &amqpx.Inflight{Then: then, Arrived: arrived}
	if err := t.pub.Fit(&o); err != nil {
		then(err)
		return err
	}
	f.Key, f.Mandatory, f.Msg = amqpx.KeyOf(&o), o.Mandatory, o.Msg
	return t.pub.Enqueue(ctx, f)
}
