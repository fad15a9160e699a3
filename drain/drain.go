package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Report is what Check found of one queue.
type Report struct {
	VHost string `json:"vhost"`
	Queue string `json:"queue"`
	// Depth is every message in the queue: Ready plus Unacked.
	Depth   int `json:"depth"`
	Ready   int `json:"ready"`
	Unacked int `json:"unacked"`
	// Consumers subscribed to the queue.
	Consumers int `json:"consumers"`
	// Rates in messages per second, as the management plugin samples them
	// (over its last few seconds; 0 while it has no sample yet). Deliver
	// counts deliveries to consumers (acked or not) and basic.get.
	PublishRate float64 `json:"publish_rate"`
	DeliverRate float64 `json:"deliver_rate"`
	AckRate     float64 `json:"ack_rate"`
	// OldestAge is the age of the message at the head of the queue, from
	// its timestamp property (the runtime sets it on every publish);
	// OldestKnown is false when the broker does not give it (an empty
	// queue, a head message without a timestamp, a queue type that does
	// not report it).
	OldestAge   time.Duration `json:"oldest_age_ns,omitempty"`
	OldestKnown bool          `json:"oldest_known"`
	// Draining is the verdict, Why its reason in words.
	Draining bool   `json:"draining"`
	Why      string `json:"why"`
	// At is when the report was made.
	At time.Time `json:"at"`
}

// Options tune the verdict.
type Options struct {
	// MaxAge, when set, is the age of the oldest message past which the
	// queue is not draining whatever its rates say (default 0: not used).
	MaxAge time.Duration
}

// ErrNoManagement matches the error of a call to the management API that
// got no answer at all: nothing listens on its port, which is what a
// RabbitMQ without its management plugin looks like. acemq topology diff,
// acemq drain, Check and acemqtest.DialVHost need the plugin; the error
// (a *NoManagementError) names it and the command that enables it.
var ErrNoManagement = errors.New("drain: the management API does not answer")

// NoManagementError is a call to the management API at Endpoint that could
// not connect (Err: refused, unreachable, timed out connecting). It matches
// ErrNoManagement and keeps its cause (errors.Is(err,
// syscall.ECONNREFUSED)).
type NoManagementError struct {
	Endpoint string
	Err      error
}

func (e *NoManagementError) Error() string {
	cause := e.Err.Error()
	var op *net.OpError
	if errors.As(e.Err, &op) {
		cause = op.Error()
	}
	return "management API at " + e.Endpoint + ": nothing answers (" + cause + "): RabbitMQ's management plugin (rabbitmq_management) is needed; enable it with `rabbitmq-plugins enable rabbitmq_management`"
}

func (e *NoManagementError) Unwrap() error { return e.Err }

// Is makes a NoManagementError match ErrNoManagement.
func (e *NoManagementError) Is(target error) bool { return target == ErrNoManagement }

// ManagementError is err, from a call to the management API at endpoint,
// as a *NoManagementError when the call could not connect; any other err
// as it is.
func ManagementError(endpoint string, err error) error {
	var op *net.OpError
	if err == nil || errors.Is(err, ErrNoManagement) || !errors.As(err, &op) || op.Op != "dial" {
		return err
	}
	return &NoManagementError{Endpoint: strings.TrimSuffix(endpoint, "/"), Err: err}
}

// ErrQueueNotFound is the error of Check on a queue that does not exist.
var ErrQueueNotFound = errors.New("drain: queue not found")

// Check reads queue in vhost through c and says whether it drains.
// ctx bounds the requests (rabbit-hole's own calls are bounded by the
// client's transport; the oldest-message request follows ctx).
func Check(ctx context.Context, c *rabbithole.Client, vhost, queue string, opts Options) (Report, error) {
	r := Report{VHost: vhost, Queue: queue, At: time.Now()}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	// Only the columns used: rabbit-hole v2.12 cannot decode the
	// consumer_details RabbitMQ 3.10 gives for a queue with consumers.
	q, err := c.GetQueueWithParameters(vhost, queue, url.Values{"columns": {"name,messages,messages_ready,messages_unacknowledged,consumers,message_stats"}})
	if err != nil {
		var er rabbithole.ErrorResponse
		if errors.As(err, &er) && er.StatusCode == http.StatusNotFound {
			return r, fmt.Errorf("%w: %q in vhost %q", ErrQueueNotFound, queue, vhost)
		}
		return r, fmt.Errorf("drain: queue %q: %w", queue, ManagementError(c.Endpoint, err))
	}
	r.Depth, r.Ready, r.Unacked, r.Consumers = q.Messages, q.MessagesReady, q.MessagesUnacknowledged, q.Consumers
	if s := q.MessageStats; s != nil {
		r.PublishRate = float64(s.PublishDetails.Rate)
		r.DeliverRate = float64(s.DeliverGetDetails.Rate)
		r.AckRate = float64(s.AckDetails.Rate) + float64(s.DeliverNoAckDetails.Rate) + float64(s.GetNoAckDetails.Rate)
	}
	if r.Depth > 0 {
		// rabbit-hole v2.12's QueueInfo has no head_message_timestamp: ask
		// for that one column with the client's endpoint and credentials.
		ts, ok, err := headTimestamp(ctx, c, vhost, queue)
		if err != nil {
			return r, err
		}
		if ok {
			r.OldestAge, r.OldestKnown = r.At.Sub(ts), true
			if r.OldestAge < 0 {
				r.OldestAge = 0
			}
		}
	}
	r.Draining, r.Why = Verdict(r, opts)
	return r, nil
}

// Verdict judges a report: draining when the queue is empty, or when it
// has consumers that ack at least as fast as messages are published (and
// ack at all); not draining when messages wait with no consumer, when
// consumers take nothing, when acks fall behind publishes, or when the
// oldest message is older than opts.MaxAge.
func Verdict(r Report, opts Options) (bool, string) {
	switch {
	case r.Depth == 0:
		return true, "empty"
	case opts.MaxAge > 0 && r.OldestKnown && r.OldestAge > opts.MaxAge:
		return false, fmt.Sprintf("the oldest message is %s old, over %s", r.OldestAge.Round(time.Second), opts.MaxAge)
	case r.Consumers == 0:
		return false, fmt.Sprintf("%d messages and no consumer", r.Depth)
	case r.AckRate == 0 && r.DeliverRate == 0:
		return false, fmt.Sprintf("%d messages, %d consumers, nothing delivered or acked", r.Depth, r.Consumers)
	case r.AckRate < r.PublishRate:
		return false, fmt.Sprintf("acks %.1f/s behind publishes %.1f/s", r.AckRate, r.PublishRate)
	}
	return true, fmt.Sprintf("acks %.1f/s, publishes %.1f/s", r.AckRate, r.PublishRate)
}

// headTimestamp is the head message's timestamp as the management API
// reports it (head_message_timestamp, seconds), if it does.
func headTimestamp(ctx context.Context, c *rabbithole.Client, vhost, queue string) (time.Time, bool, error) {
	// The list endpoint reports it (the single-queue one, on 3.10, does
	// not): filter it to this queue's name.
	qs := url.Values{"page": {"1"}, "page_size": {"100"}, "use_regex": {"true"},
		"name": {"^" + regexp.QuoteMeta(queue) + "$"}, "columns": {"name,head_message_timestamp"}}
	u := strings.TrimSuffix(c.Endpoint, "/") + "/api/queues/" + url.PathEscape(vhost) + "?" + qs.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("drain: %w", err)
	}
	req.SetBasicAuth(c.Username, c.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("drain: queue %q: %w", queue, ManagementError(c.Endpoint, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, false, fmt.Errorf("drain: queue %q: management API answered %s", queue, resp.Status)
	}
	var page struct {
		Items []struct {
			Name string   `json:"name"`
			Head *float64 `json:"head_message_timestamp"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return time.Time{}, false, fmt.Errorf("drain: queue %q: %w", queue, err)
	}
	var body struct{ Head *float64 }
	for _, it := range page.Items {
		if it.Name == queue {
			body.Head = it.Head
		}
	}
	if body.Head == nil || *body.Head <= 0 {
		return time.Time{}, false, nil
	}
	sec := int64(*body.Head)
	if *body.Head > 1e12 { // milliseconds, as some brokers report
		return time.UnixMilli(int64(*body.Head)), true, nil
	}
	return time.Unix(sec, 0), true, nil
}
