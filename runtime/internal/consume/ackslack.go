package consume

import "time"

// The ack slack (WithAckSlack) is window room for deliveries settled
// behind a copy still waiting for its confirm. Rule 1 keeps the original
// unacked until its copy is confirmed, so no multiple ack may pass it;
// without the slack the deliveries settled behind it are acked one by one
// after ackStuck (or once a batch of them waits), and the broker walks its
// list of the channel's unacked deliveries for each single ack
// (bench/NOTES.md, R1, case A1). With a slack of n the channel's
// basic.qos is prefetch + hold budget + n, and up to n settled deliveries
// wait behind a copy in flight, for at most ackSlackWait, so that the one
// multiple ack sent when it is confirmed covers them all. Rule 1 is
// unchanged: they are settled, and the ack is sent on a tag below the
// lowest one unsettled. What a crash redelivers grows by up to n settled
// deliveries (the fault suite's duplicate bound counts them).
//
// A retry held in memory pins the low end of the window for its whole
// wait, confirm or not; with a slack, a wait is held in a budget slot only
// while the deliveries the session takes meanwhile fit in the slack, and
// spills to its rung otherwise. What the session takes during a wait is
// judged by what it took over the last span as long as the wait: the wait
// fits unless the session took slack deliveries or more within it. A rate
// measured over a short window and multiplied by the wait, as this once
// was, took two deliveries 150 ms apart for some 13 a second and spilled
// an 8 s wait with three messages in flight (issue 37): a handful of
// messages, or the retries of a few coming back together, never fills
// a slack, and spilled none of their waits only by luck.

// ackSlackWait bounds how long settled deliveries wait in the slack for the
// copy below them, per copy: past it they are acked one by one.
const ackSlackWait = 500 * time.Millisecond

// rateWindow is how often a session's held retries are judged again
// against what it took lately (respillHeld).
const rateWindow = 100 * time.Millisecond

// maxTakenKept bounds how many of its latest deliveries' times a session
// keeps: past it (a slack set above it), the deliveries of a wait are
// counted from the rate over the last maxTakenKept.
const maxTakenKept = 1024

// deliveryRate is what a session took lately: the times of its latest
// deliveries (as many as its slack, at most maxTakenKept), and a window
// of rateWindow that says when to judge its held retries again; guarded
// by session.mu.
type deliveryRate struct {
	n     int
	since time.Time
	// recent holds the latest deliveries' times (UnixNano), a ring: next
	// is the slot of the oldest once it is full, count how many it holds.
	recent []int64
	next   int
	count  int
}

// took counts a delivery taken at now, in a session of slack, reporting
// whether that ended a window (the held retries are to be judged again).
func (r *deliveryRate) took(now time.Time, slack int) bool {
	if slack > 0 {
		if r.recent == nil {
			r.recent = make([]int64, min(slack, maxTakenKept))
		}
		r.recent[r.next] = now.UnixNano()
		r.next = (r.next + 1) % len(r.recent)
		r.count = min(r.count+1, len(r.recent))
	}
	if r.since.IsZero() {
		r.since = now
	}
	r.n++
	if d := now.Sub(r.since); d >= rateWindow {
		r.n, r.since = 0, now
		return true
	}
	return false
}

// fits reports whether the deliveries the session would take over wait,
// judged by those it took over the last wait before now, fit in slack
// (fewer than slack of them: as many settle behind a held retry before
// its slack is full).
func (r *deliveryRate) fits(now time.Time, wait time.Duration, slack int) bool {
	if slack <= 0 || r.count < len(r.recent) || len(r.recent) == 0 {
		return true // fewer deliveries taken so far, ever, than the slack
	}
	oldest := time.Duration(now.UnixNano() - r.recent[r.next]) // the span of the latest len(recent)
	if len(r.recent) == slack {
		return oldest > wait
	}
	// More slack than kept: the rate over the latest maxTakenKept.
	return oldest > 0 && float64(len(r.recent))*wait.Seconds()/oldest.Seconds() < float64(slack)
}

// holdGate is reserveHold's test of the ack slack at the session's rate
// now: whether a retry held for a wait still fits in it.
func (s *session) holdGate() func(wait time.Duration) bool {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acks.slack == 0 {
		return func(time.Duration) bool { return true }
	}
	// The latest times, copied: the gate is used without s.mu.
	r, slack := s.rate, s.acks.slack
	r.recent = append([]int64(nil), r.recent...)
	return func(wait time.Duration) bool { return r.fits(now, wait, slack) }
}

// slackHolds reports whether rest, the settled tags waiting above low (the
// lowest unsettled tag), go on waiting in the slack: low is a copy in
// flight, rest fit in the slack, and they have waited less than
// ackSlackWait for this copy; s.mu is held.
func (s *session) slackHolds(low uint64, rest int, mode flushMode) bool {
	if s.acks.slack == 0 || mode == flushAll || rest >= s.acks.slack {
		return false
	}
	if _, held := s.budgeted[low]; held {
		// A retry held in a hold budget's slot: admitted only while the
		// deliveries the session takes during its wait fit in the slack
		// (reserveHold, respillHeld), so they wait for it. Its copy's
		// confirm starts the per-copy bound below.
		s.acks.slackLow = 0
		return true
	}
	if _, ok := s.copying[low]; !ok {
		return false
	}
	now := time.Now()
	if s.acks.slackLow != low {
		s.acks.slackLow, s.acks.slackSince = low, now
	}
	return now.Sub(s.acks.slackSince) < s.acks.slackWait
}

// copyInFlight marks the delivery tag's copy as written and not
// confirmed yet.
func (s *session) copyInFlight(tag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.copying == nil {
		s.copying = map[uint64]struct{}{}
	}
	s.copying[tag] = struct{}{}
}

// copyLanded unmarks the delivery tag's copy: it was confirmed or failed.
func (s *session) copyLanded(tag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.copying, tag)
}

// defaultAckSlackMax is the largest default ack slack. The deliveries
// settled behind a copy in flight are those the consumer takes during the
// copy's confirm; a consumer's prefetch is the scale of what it takes in
// a round trip, so the default slack is its prefetch, up to this: at R1's
// prefetch of 256 a slack of 64 paid as 256 and 512 did, for a quarter of
// their window and memory (bench/NOTES.md, "R1: the ack slack as the
// default").
const defaultAckSlackMax = 64

// defaultAckSlack is the ack slack of a consumer that did not set one: its
// prefetch up to defaultAckSlackMax, but none under WithRedeliveryLimit,
// whose count every delivery the broker has sent ahead shares with the
// crash of the process holding it (as defaultHoldBudget). The broker sends
// up to the whole qos ahead, so the default follows the prefetch: a
// consumer of WithPrefetch(1) takes 3 deliveries ahead (1 + budget 1 +
// slack 1), not 66.
func defaultAckSlack(cfg Config) int {
	if cfg.RedeliveryLimit > 0 {
		return 0
	}
	return min(cfg.Prefetch, defaultAckSlackMax)
}
