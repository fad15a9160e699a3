package consume

import (
	"log/slog"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
)

// Config is a consumer's configuration: what package runtime's
// ConsumeOptions set (the fields up to OutcomeLog; the test hooks among
// them are set by runtime's export_test.go only), then what its
// connection gives.
type Config struct {
	Prefetch int
	// decodedAhead, a test hook, is called with the message id of each
	// delivery decoded ahead of its handler (decode.go).
	DecodedAhead     func(id string)
	HoldBudget       int
	HoldBudgetSet    bool // else the budget is the prefetch
	AckSlack         int
	AckSlackSet      bool // else defaultAckSlack
	Concurrency      int
	Retry            *core.RetryPolicy
	NoDeclare        bool
	RequeueOnFailure bool
	BodyInLogs       int
	MaxBody          int
	RequesterCheck   bool              // WithRequesterCheck
	ReplyToAllowed   *core.ReplyToRule // WithReplyToAllowed; nil: the default
	SetAside         SetAsideTiming
	RegistryWaits    RegistryWaits // zero: the defaults (hold.go); tests set it (export_test.go)
	RedeliveryLimit  int
	AckDelay         time.Duration // zero: ackDelay (ackbatch.go); tests set it (export_test.go)
	// copyGate, when set (tests: export_test.go), holds every set-aside copy's outcome
	// until it is closed, as if the broker's confirm were late.
	CopyGate <-chan struct{}
	// ackSlackWait, when set (tests), replaces ackSlackWait; ackSent, when
	// set (tests), is called with every basic.ack the session sends.
	AckSlackWait time.Duration
	AckSent      func(tag uint64, multiple bool)
	// rungProbe is how long a missing rung is taken as missing; zero:
	// rungProbe (rungs.go); tests set it (export_test.go).
	RungProbe time.Duration
	// middleware is WithMiddleware's, in order (middleware.go).
	Middleware []core.Middleware
	OutcomeLog obs.OutcomeLogLimit // WithOutcomeLogLimit's (outcomelog.go)

	// Conn is the connection (package runtime's, through an adapter).
	Conn    Conn
	Metrics *obs.Metrics
	// Log is the connection's logger (WithLogger).
	Log *slog.Logger
	// ConnRetry and ConnMiddleware are the connection's WithRetry and
	// WithMiddleware.
	ConnRetry      *core.RetryPolicy
	ConnMiddleware []core.Middleware
	// ReconnectMin and ReconnectMax bound the wait before a resubscribe
	// (WithReconnectBackoff).
	ReconnectMin, ReconnectMax time.Duration
	// Quorum and Native are what the connection declared: its quorum
	// queues and its queues with the broker's delayed retry.
	Quorum *QuorumQueues
	Native *NativeQueues
}

// RungProbeOrDefault is how long a rung found missing is taken as missing.
func (c Config) RungProbeOrDefault() time.Duration {
	if c.RungProbe > 0 {
		return c.RungProbe
	}
	return rungProbe
}

// Qos is the channel's basic.qos: the prefetch, the hold budget and the
// ack slack.
func (c Config) Qos() int { return c.Prefetch + c.HoldBudget + c.AckSlack }
