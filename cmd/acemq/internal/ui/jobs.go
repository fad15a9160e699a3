package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// Selection is what an action takes: the messages listed, or else every
// message its filter passes (a group, narrowed by queue, type, origin).
type Selection struct {
	Filter   Filter       `json:"filter"`
	Messages []messageRef `json:"messages,omitempty"`
}

func (sel Selection) validate() error {
	if len(sel.Messages) > 0 {
		for _, m := range sel.Messages {
			if _, err := parseKey(m.Key); err != nil {
				return err
			}
		}
		return nil
	}
	if sel.Filter.Group == "" && !sel.Filter.narrows() {
		return errors.New("nothing selected: choose messages or a group")
	}
	return sel.Filter.validate()
}

// picker is a selection compiled for one source: whether a message
// (from a look or a replay's filter) is taken.
func (sel Selection) picker(src string) func(env runtime.Envelope, headers map[string]any, body []byte) bool {
	if len(sel.Messages) > 0 {
		keys := map[Key]bool{}
		for _, m := range sel.Messages {
			if m.Source == src {
				k, _ := parseKey(m.Key)
				keys[k] = true
			}
		}
		return func(env runtime.Envelope, _ map[string]any, body []byte) bool { return keys[keyOf(env, body)] }
	}
	return func(env runtime.Envelope, headers map[string]any, _ []byte) bool {
		return sel.Filter.match(dimValues(src, env, headers))
	}
}

// sources are the queues the selection has messages on (as the index
// counted them), and how many.
func (s *Server) selectionSources(sel Selection) ([]string, int) {
	counts := map[string]int{}
	if len(sel.Messages) > 0 {
		for _, m := range sel.Messages {
			counts[m.Source]++
		}
	} else {
		counts = s.Index().count(sel.Filter)
	}
	var out []string
	total := 0
	for _, src := range s.sources { // the sources' order
		if n := counts[src]; n > 0 {
			out = append(out, src)
			total += n
		}
	}
	return out, total
}

// ReplayRequest is a replay or a discard as the page asks for it.
type ReplayRequest struct {
	Selection    Selection `json:"selection"`
	KeepAttempts bool      `json:"keep_attempts"`
	To           string    `json:"to,omitempty"`   // a queue of the manifest; "": each message's own
	Rate         float64   `json:"rate,omitempty"` // messages a second, 0: as fast as the broker confirms
	Limit        int       `json:"limit,omitempty"`
	// Discard only.
	Archive      string `json:"archive,omitempty"`
	ConfirmCount int    `json:"confirm_count,omitempty"`
}

func (req *ReplayRequest) check(allowed []string) error {
	if err := req.Selection.validate(); err != nil {
		return err
	}
	switch {
	case req.Rate < 0:
		return fmt.Errorf("rate %g: want 0 (no limit) or more messages a second", req.Rate)
	case req.Limit < 0:
		return fmt.Errorf("limit %d: want 0 (no limit) or more", req.Limit)
	case req.To != "" && !slices.Contains(allowed, req.To):
		return fmt.Errorf("%w: %s is not a queue of the manifest (allowed: %s)", runtime.ErrReplayNotAllowed, req.To, strings.Join(allowed, ", "))
	}
	return nil
}

// Job is a replay or a discard running in the background.
type Job struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"` // replay or discard
	Who      string   `json:"who"`
	What     string   `json:"what"`
	Target   string   `json:"target"`
	Expected int      `json:"expected"`
	Started  string   `json:"started"`
	State    string   `json:"state"` // running, done, cancelled, failed
	Looked   int      `json:"looked"`
	Selected int      `json:"selected"`
	Moved    int      `json:"moved"`
	Result   string   `json:"result,omitempty"` // the runtime's words: "moved 40, skipped 2 (drained)"
	Failures []string `json:"failures,omitempty"`
	Error    string   `json:"error,omitempty"`
	Elapsed  float64  `json:"elapsed_s"`
	Rate     float64  `json:"rate"` // moved a second

	cancel func() // asks the job to stop (stop is closed)
	stop   chan struct{}
	start  time.Time
}

type jobs struct {
	mu   sync.Mutex
	next int
	list []*Job
}

func newJobs() *jobs { return &jobs{} }

func (j *jobs) add(job *Job) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	job.ID = strconv.Itoa(j.next)
	j.list = append(j.list, job)
}

func (j *jobs) update(fn func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fn()
}

func (j *jobs) snapshot() []Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Job, 0, len(j.list))
	for i := len(j.list) - 1; i >= 0; i-- {
		c := *j.list[i]
		if c.State == "running" {
			c.Elapsed = time.Since(c.start).Seconds()
		}
		if c.Elapsed > 0 {
			c.Rate = float64(c.Moved) / c.Elapsed
		}
		out = append(out, c)
	}
	return out
}

func (j *jobs) get(id string) *Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, job := range j.list {
		if job.ID == id {
			return job
		}
	}
	return nil
}

func (j *jobs) cancelAll() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, job := range j.list {
		if job.cancel != nil {
			job.cancel()
		}
	}
}

// pacer spaces moves rate a second apart.
type pacer struct {
	every time.Duration
	next  time.Time
}

// wait blocks until the next move may go; false when stop closed first.
func (p *pacer) wait(stop <-chan struct{}) bool {
	if p == nil || p.every <= 0 {
		return true
	}
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	d := p.next.Sub(now)
	p.next = p.next.Add(p.every)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

// stopGrace is how long a cancelled job waits for its pass to reach its
// filter (between two reads) before its context is cancelled outright.
const stopGrace = 10 * time.Second

// describe says what a selection is, for a job and the audit log.
func (sel Selection) describe() string {
	if len(sel.Messages) > 0 {
		if len(sel.Messages) == 1 {
			return "message " + sel.Messages[0].Key + " of " + sel.Messages[0].Source
		}
		return fmt.Sprintf("%d selected messages", len(sel.Messages))
	}
	var parts []string
	f := sel.Filter
	if f.Group != "" {
		parts = append(parts, f.By+` group "`+f.Group+`"`)
	}
	for _, p := range [][2]string{{"queue", f.Queue}, {"type", f.Type}, {"origin", f.Origin}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, ", ")
}

// runReplay runs one replay (or discard) job: for each source, passes of
// Connection.Replay until the source is drained of the selection, the
// limit is reached or the job is cancelled; a pass that reaches the
// runtime's longest pass (MaxReplayPass) is followed by another.
//
// A cancel is cooperative: the pass's filter, called between two reads,
// cancels the pass's context and declines, so the pass ends "cancelled"
// after publishing the batch it holds. (Cancelled while a read is in
// flight, the runtime abandons the channel as a broker that did not
// answer, and the batch goes back unmoved.) A pass that does not reach
// its filter within stopGrace is cancelled outright.
func (s *Server) runReplay(ctx context.Context, job *Job, req ReplayRequest, sources []string, archive func(string) string) {
	ctx, hard := context.WithCancel(ctx)
	defer hard()
	stopped := func() bool {
		select {
		case <-job.stop:
			return true
		default:
			return false
		}
	}
	go func() {
		select {
		case <-job.stop:
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(stopGrace):
			hard()
		case <-ctx.Done():
		}
	}()
	var total runtime.ReplayResult
	total.Stop = runtime.ReplayDrained
	var runErr error
	var pace *pacer
	if req.Rate > 0 {
		pace = &pacer{every: time.Duration(float64(time.Second) / req.Rate)}
	}
	moved := 0
sources:
	for _, src := range sources {
		unlock, err := s.locks.lock(ctx, src)
		if err != nil {
			runErr = err
			break
		}
		pick := req.Selection.picker(src)
		for {
			opts := runtime.ReplayOptions{KeepAttempts: req.KeepAttempts, Queues: s.allowed, RoutingKey: req.To}
			if archive != nil {
				opts.RoutingKey, opts.KeepAttempts = archive(src), true
			}
			if req.Limit > 0 {
				opts.Limit = req.Limit - moved
			}
			opts.Filter = func(env runtime.Envelope, headers map[string]any, body []byte) bool {
				if stopped() {
					hard() // between two reads: the pass ends cancelled
					return false
				}
				ok := pick(env, headers, body)
				s.jobs.update(func() {
					job.Looked++
				})
				if ok && !pace.wait(job.stop) {
					hard()
					return false
				}
				if ok {
					s.jobs.update(func() { job.Selected++ })
				}
				return ok
			}
			res, err := s.conn.Replay(ctx, src, opts)
			moved += res.Moved
			total.Moved += res.Moved
			total.Skipped += res.Skipped
			total.Failed += res.Failed
			total.Refused += res.Refused
			total.Failures = append(total.Failures, res.Failures...)
			total.Stop = res.Stop
			s.jobs.update(func() { job.Moved = moved })
			if err != nil {
				runErr = err
				unlock()
				break sources
			}
			if res.Stop == runtime.ReplayDeadline && ctx.Err() == nil {
				continue // MaxReplayPass: one more pass
			}
			break
		}
		unlock()
		if stopped() || total.Stop == runtime.ReplayCancelled || total.Stop == runtime.ReplayLimit && req.Limit > 0 && moved >= req.Limit {
			break
		}
	}
	if (ctx.Err() != nil || stopped()) && total.Stop != runtime.ReplayCancelled {
		total.Stop = runtime.ReplayCancelled
	}
	s.jobs.update(func() {
		job.Result = total.String()
		job.Elapsed = time.Since(job.start).Seconds()
		for i, f := range total.Failures {
			if i == 20 {
				job.Failures = append(job.Failures, fmt.Sprintf("and %d more", len(total.Failures)-20))
				break
			}
			job.Failures = append(job.Failures, s.scrub(f.Error()))
		}
		switch {
		case runErr != nil:
			job.State, job.Error = "failed", s.scrub(runErr.Error())
		case total.Stop == runtime.ReplayCancelled:
			job.State = "cancelled"
		default:
			job.State = "done"
		}
	})
	entry := auditEntry{Who: job.Who, Action: job.Kind, What: job.What + " → " + job.Target, Count: total.Moved, Result: total.String()}
	if runErr != nil {
		entry.Error = s.scrub(runErr.Error())
	}
	s.audit.write(entry)
	s.rescan()
}

func (s *Server) startJob(kind, who string, req ReplayRequest, target string, sources []string, expected int, archive func(string) string) *Job {
	ctx, cancel := context.WithCancel(s.ctx)
	stop := make(chan struct{})
	var once sync.Once
	job := &Job{Kind: kind, Who: who, What: req.Selection.describe(), Target: target, Expected: expected,
		Started: time.Now().UTC().Format(time.RFC3339), State: "running", stop: stop, start: time.Now(),
		cancel: func() { once.Do(func() { close(stop) }) }}
	s.jobs.add(job)
	s.audit.write(auditEntry{Who: who, Action: kind, What: job.What + " → " + target, Count: expected, Result: "started (job " + job.ID + ")"})
	go func() {
		defer cancel()
		s.runReplay(ctx, job, req, sources, archive)
	}()
	return job
}

func replayTarget(req ReplayRequest) string {
	switch {
	case req.To != "":
		return req.To
	case req.KeepAttempts:
		return "each message's own queue, attempts kept"
	}
	return "each message's own queue"
}

func (s *Server) handleReplay(w http.ResponseWriter, r *http.Request, who string) {
	var req ReplayRequest
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if err := req.check(s.allowed); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	sources, n := s.selectionSources(req.Selection)
	if len(sources) == 0 {
		writeError(w, http.StatusConflict, "no message of the selection is on a queue the console read: refresh")
		return
	}
	// A target that does not exist would fail every message, each held
	// by the pass until its end (and a large batch returned at once is
	// slow for the broker to put back): refused before anything.
	targets := []string{req.To}
	if req.To == "" {
		targets = targets[:0]
		for _, src := range sources {
			if o := ownerOf(src); o != "" && !slices.Contains(targets, o) {
				targets = append(targets, o)
			}
		}
	}
	for _, q := range targets {
		if err := s.exists(r.Context(), q); err != nil {
			s.fail(w, http.StatusConflict, err)
			return
		}
	}
	job := s.startJob("replay", who, req, replayTarget(req), sources, n, nil)
	writeJSON(w, http.StatusAccepted, map[string]any{"job": job.ID})
}

// archiveOf is where a discard from src goes: the name chosen, else the
// console's --archive, else src + ".archived".
func (s *Server) archiveOf(chosen string) func(string) string {
	return func(src string) string {
		switch {
		case chosen != "":
			return chosen
		case s.cfg.Archive != "":
			return s.cfg.Archive
		}
		return src + ".archived"
	}
}

func (s *Server) handleDiscard(w http.ResponseWriter, r *http.Request, who string) {
	var req ReplayRequest
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	req.To, req.Rate, req.Limit = "", 0, 0
	if err := req.check(s.allowed); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	sources, n := s.selectionSources(req.Selection)
	if len(sources) == 0 {
		writeError(w, http.StatusConflict, "no message of the selection is on a queue the console read: refresh")
		return
	}
	archive := s.archiveOf(strings.TrimSpace(req.Archive))
	var targets []string
	for _, src := range sources {
		a := archive(src)
		if s.isSource(a) {
			s.fail(w, http.StatusBadRequest, fmt.Errorf("archive %s is a queue the console reads: choose another", a))
			return
		}
		if slices.Contains(s.allowed, a) {
			// Its consumer would take them: a replay without the replay's
			// rules (attempts and error kept, no dry run).
			s.fail(w, http.StatusBadRequest, fmt.Errorf("archive %s is a queue of the manifest, read by its consumer: choose another (a replay puts messages back)", a))
			return
		}
		if !slices.Contains(targets, a) {
			targets = append(targets, a)
		}
	}
	if req.ConfirmCount != n {
		writeJSON(w, http.StatusConflict, map[string]any{"error": fmt.Sprintf("confirm the count: %d messages would move to %s", n, strings.Join(targets, ", ")),
			"count": n, "archive": targets})
		return
	}
	for _, a := range targets {
		if err := s.cfg.Declare(r.Context(), a); err != nil {
			s.fail(w, http.StatusBadGateway, fmt.Errorf("declare the archive %s: %w", a, err))
			return
		}
	}
	// The confirmation named n: a group that grew since the pass counted
	// it has more on the queues, and those stay (never more than confirmed).
	req.Limit = n
	job := s.startJob("discard", who, req, strings.Join(targets, ", "), sources, n, archive)
	writeJSON(w, http.StatusAccepted, map[string]any{"job": job.ID})
}

// exists is nil when queue is on the broker, else why it cannot be
// replayed into.
func (s *Server) exists(ctx context.Context, queue string) error {
	_, err := s.conn.MessageCount(ctx, queue)
	if errors.Is(err, runtime.ErrQueueNotFound) {
		return fmt.Errorf("queue %s does not exist: nothing can be replayed into it (acemq topology apply -f declares the manifest's queues)", queue)
	}
	if err != nil {
		return fmt.Errorf("queue %s: %w", queue, err)
	}
	return nil
}

func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"jobs": s.jobs.snapshot()})
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request, who string) {
	job := s.jobs.get(r.PathValue("id"))
	if job == nil {
		writeError(w, http.StatusNotFound, "no such job")
		return
	}
	job.cancel()
	s.audit.write(auditEntry{Who: who, Action: "cancel", What: "job " + job.ID + " (" + job.Kind + " of " + job.What + ")"})
	writeJSON(w, http.StatusAccepted, map[string]any{"job": job.ID})
}

// DryRunLine is one message a dry run looked at.
type DryRunLine struct {
	Action string `json:"action"` // move, refuse or fail
	ID     string `json:"id"`
	Type   string `json:"type"`
	Target string `json:"target,omitempty"`
	Why    string `json:"why"`
}

// handleDryRun reads the selection's queues without moving anything and
// says what a replay would do with each message: move it (where), leave
// it (refused: its headers name a queue not allowed; failed: no queue to
// go back to, or the source itself), with the replay's rules.
func (s *Server) handleDryRun(w http.ResponseWriter, r *http.Request) {
	var req ReplayRequest
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if err := req.check(s.allowed); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	sources, _ := s.selectionSources(req.Selection)
	var lines []DryRunLine
	move, stay, refuse, fail := 0, 0, 0, 0
	byTarget := map[string]int{}
	exists := map[string]error{}
	for _, src := range sources {
		unlock, err := s.locks.lock(r.Context(), src)
		if err != nil {
			s.fail(w, http.StatusServiceUnavailable, err)
			return
		}
		pick := req.Selection.picker(src)
		_, err = s.conn.Browse(r.Context(), src, 0, func(d *runtime.Delivery) error {
			if !pick(d.Envelope, d.Headers, d.Body) {
				stay++
				return nil
			}
			if req.Limit > 0 && move >= req.Limit {
				stay++
				return nil
			}
			l := DryRunLine{ID: d.Envelope.ID, Type: d.Envelope.Type, Why: reason(d.Envelope, d.Headers)}
			target := req.To
			if target == "" {
				target = runtime.OwnQueue(d.Headers)
			}
			l.Target = target
			switch {
			case target == "":
				l.Action, l.Why = "fail", "no queue to go back to (no x-acemq-queue or x-death): choose a queue"
				fail++
			case target == src:
				l.Action, l.Why = "fail", "its own queue is "+src+" itself"
				fail++
			case req.To == "" && !slices.Contains(s.allowed, target):
				l.Action, l.Why = "refuse", "its headers name queue "+target+", not a queue of the manifest"
				refuse++
			default:
				if _, ok := exists[target]; !ok {
					exists[target] = s.exists(r.Context(), target)
				}
				if err := exists[target]; err != nil {
					l.Action, l.Why = "fail", s.scrub(err.Error())
					fail++
					break
				}
				l.Action = "move"
				move++
				byTarget[target]++
			}
			if len(lines) < 200 {
				lines = append(lines, l)
			}
			return nil
		})
		unlock()
		if err != nil {
			s.fail(w, http.StatusBadGateway, err)
			return
		}
	}
	targets := make([]string, 0, len(byTarget))
	for t, n := range byTarget {
		targets = append(targets, fmt.Sprintf("%d to %s", n, t))
	}
	sort.Strings(targets)
	summary := fmt.Sprintf("dry run: would move %d, leave %d", move, stay)
	if refuse > 0 {
		summary += fmt.Sprintf(", refuse %d", refuse)
	}
	if fail > 0 {
		summary += fmt.Sprintf(", fail %d", fail)
	}
	summary += "; nothing moved"
	writeJSON(w, http.StatusOK, map[string]any{"summary": summary, "move": move, "stay": stay, "refuse": refuse, "fail": fail,
		"targets": targets, "lines": lines, "sources": sources})
}
