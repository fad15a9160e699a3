package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/internal/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// A message whose own headers name another queue than the one its .dlq
// belongs to is not moved there by default (issue 19, item 10): anyone who
// can publish into q.dlq writes those headers. It stays on the source,
// counted in Refused with its reason; ReplayOptions.Queues allows a queue,
// FollowHeaders follows the headers.
func TestReplayFollowsOnlyAllowedHeaders(t *testing.T) {
	c := dial(t)
	q := brokertest.Queue(t, "replay-allow")
	dlq, victim := wire.DeadLetterQueue(q), q+"-victim"
	for _, name := range []string{q, dlq, victim} {
		rawQueue(t, name, nil)
	}
	rawPublish(t, dlq, deadLetter("own", "own", q, 2, "boom"))
	rawPublish(t, dlq, deadLetter("forged", "forged", victim, 2, "boom"))
	forgedDeath := textMessage("forged-death", amqp.Table{wire.HeaderID: "forged-death",
		"x-death": []any{amqp.Table{"queue": victim, "reason": "rejected", "count": int64(1), "exchange": "", "routing-keys": []any{victim}}}})
	rawPublish(t, dlq, forgedDeath)
	waitDepth(t, dlq, 3, wait)

	res, err := c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if res.Moved != 1 || res.Refused != 2 || res.Failed != 0 || res.String() != "moved 1, skipped 0, refused 2 (drained)" {
		t.Errorf("result %q %+v, want moved 1, skipped 0, refused 2 (drained)", res, res)
	}
	if len(res.Failures) != 2 {
		t.Fatalf("failures %v, want the 2 refused", res.Failures)
	}
	for _, f := range res.Failures {
		if !errors.Is(f, runtime.ErrReplayNotAllowed) || f.Target != victim {
			t.Errorf("failure %v (target %q), want ErrReplayNotAllowed to %s", f, f.Target, victim)
		}
		for _, want := range []string{"its headers name queue " + victim, "not " + q + " (the queue " + dlq + " belongs to)", "left on " + dlq} {
			if !strings.Contains(f.Error(), want) {
				t.Errorf("failure %q, want it to say %q", f, want)
			}
		}
	}
	if n := depth(t, victim); n != 0 {
		t.Errorf("%s holds %d: a forged header made replay deliver there", victim, n)
	}
	if got := idsOn(t, q); len(got) != 1 || got[0] != "own" {
		t.Errorf("%s holds %v, want [own]", q, got)
	}
	waitDepth(t, dlq, 2, wait)

	// Allowed by name: moved.
	res, err = c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{Queues: []string{victim}, Limit: 1})
	if err != nil || res.Moved != 1 || res.Refused != 0 {
		t.Fatalf("Replay with Queues: %v %v, want moved 1", res, err)
	}
	// FollowHeaders: moved.
	res, err = c.Replay(ctxFor(t, wait), dlq, runtime.ReplayOptions{FollowHeaders: true})
	if err != nil || res.Moved != 1 || res.Refused != 0 {
		t.Fatalf("Replay with FollowHeaders: %v %v, want moved 1", res, err)
	}
	waitDepth(t, victim, 2, wait)
	if n := depth(t, dlq); n != 0 {
		t.Errorf("%s still holds %d", dlq, n)
	}
}
