package ui

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// maxMatches bounds what a search keeps.
const maxMatches = 1000

// search is a full-text search: a pass that reads the sources again (the
// index keeps no bodies) and keeps the messages whose reason, headers or
// decoded body hold every word of the query, any case.
type search struct {
	Query  string `json:"query"`
	Filter Filter `json:"filter"`
	cancel context.CancelFunc

	mu      sync.Mutex
	matches []RowView
	more    int // matches past maxMatches
	read    int
	total   int
	running bool
	started time.Time
	elapsed float64
	err     string
}

func terms(q string) []string {
	return strings.Fields(strings.ToLower(q))
}

// haystack is what a search looks in: the reason, every header (name and
// value) and the decoded body, lower-cased.
func (s *Server) haystack(ctx context.Context, d *runtime.Delivery) string {
	var b strings.Builder
	b.WriteString(reason(d.Envelope, d.Headers))
	b.WriteByte('\n')
	names := make([]string, 0, len(d.Headers))
	for k := range d.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(valueText(d.Headers[k]))
		b.WriteByte('\n')
	}
	b.WriteString(d.Envelope.ID)
	b.WriteByte('\n')
	b.WriteString(d.Envelope.CorrelationID)
	b.WriteByte('\n')
	b.WriteString(s.bodyText(ctx, d))
	return strings.ToLower(b.String())
}

func (s *Server) runSearch(ctx context.Context, se *search) {
	defer func() {
		se.mu.Lock()
		se.running = false
		se.elapsed = time.Since(se.started).Seconds()
		se.mu.Unlock()
	}()
	words := terms(se.Query)
	sources := s.sources
	if se.Filter.Queue != "" {
		sources = []string{se.Filter.Queue}
	}
	for _, src := range sources {
		if !s.isSource(src) {
			continue
		}
		n, err := s.conn.MessageCount(ctx, src)
		if err != nil || n == 0 {
			continue
		}
		se.mu.Lock()
		se.total += n
		se.mu.Unlock()
		unlock, err := s.locks.lock(ctx, src)
		if err != nil {
			return
		}
		pos := 0
		_, err = s.conn.Browse(ctx, src, 0, func(d *runtime.Delivery) error {
			p := pos
			pos++
			ok := se.Filter.match(dimValues(src, d.Envelope, d.Headers))
			if ok {
				hay := s.haystack(ctx, d)
				for _, w := range words {
					if !strings.Contains(hay, w) {
						ok = false
						break
					}
				}
			}
			se.mu.Lock()
			defer se.mu.Unlock()
			se.read++
			if !ok {
				return nil
			}
			if len(se.matches) >= maxMatches {
				se.more++
				return nil
			}
			why := reason(d.Envelope, d.Headers)
			vals := dimValues(src, d.Envelope, d.Headers)
			var first string
			if !d.Envelope.FirstSeen.IsZero() {
				first = timeText(d.Envelope.FirstSeen)
			}
			se.matches = append(se.matches, RowView{Source: src, Pos: p, Key: keyOf(d.Envelope, d.Body).String(),
				ID: d.Envelope.ID, Type: vals[ByType], Origin: vals[ByOrigin], Attempt: d.Envelope.Attempt,
				Replays: d.Envelope.ReplayCount, FirstSeen: first, Reason: cutText(why, maxReason), Group: vals[ByReason]})
			return nil
		})
		unlock()
		if err != nil {
			se.mu.Lock()
			se.err = s.scrub(err.Error())
			se.mu.Unlock()
			return
		}
	}
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query  string `json:"query"`
		Filter Filter `json:"filter"`
	}
	if err := readJSON(r, &req); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if err := req.Filter.validate(); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	if len(terms(req.Query)) == 0 {
		s.fail(w, http.StatusBadRequest, fmt.Errorf("an empty search: give a word to look for"))
		return
	}
	s.mu.Lock()
	if s.search != nil {
		s.search.cancel()
	}
	ctx, cancel := context.WithCancel(s.ctx)
	se := &search{Query: req.Query, Filter: req.Filter, cancel: cancel, running: true, started: time.Now()}
	s.search = se
	s.mu.Unlock()
	go s.runSearch(ctx, se)
	writeJSON(w, http.StatusAccepted, se.state())
}

func (se *search) state() map[string]any {
	se.mu.Lock()
	defer se.mu.Unlock()
	el := se.elapsed
	if se.running {
		el = time.Since(se.started).Seconds()
	}
	return map[string]any{"query": se.Query, "filter": se.Filter, "running": se.running, "read": se.read,
		"total": se.total, "matches": append([]RowView(nil), se.matches...), "more": se.more, "elapsed_s": el, "error": se.err}
}

func (s *Server) handleSearchState(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	se := s.search
	s.mu.Unlock()
	if se == nil {
		writeJSON(w, http.StatusOK, map[string]any{"running": false})
		return
	}
	writeJSON(w, http.StatusOK, se.state())
}
