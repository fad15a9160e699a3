package ui

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

// The dimensions a group is made along.
const (
	ByReason = iota // the folded reason (Fold)
	ByQueue         // the queue the message is in (orders.new.dlq)
	ByType          // its type property
	ByOrigin        // x-acemq-origin
	nDims
)

var dimNames = [nDims]string{"reason", "queue", "type", "origin"}

func dimOf(name string) (int, bool) {
	for i, n := range dimNames {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

// none stands for an empty value in a group's key.
const none = "(none)"

// Key identifies one message: a hash of its id, error, first seen,
// attempt and body, the same whether computed from a look (Browse) or a
// replay's filter. Two byte-identical copies share it.
type Key [12]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

func parseKey(s string) (Key, error) {
	var k Key
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(k) {
		return k, fmt.Errorf("message key %q: want %d hex digits", s, 2*len(k))
	}
	copy(k[:], b)
	return k, nil
}

func keyOf(env runtime.Envelope, body []byte) Key {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{env.ID, env.Error, env.Type} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(env.FirstSeen.UnixNano()))
	h.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(env.Attempt))
	h.Write(n[:])
	h.Write(body)
	var k Key
	copy(k[:], h.Sum(nil))
	return k
}

// reason says why a message is where it is: its x-acemq-error, else the
// broker's reason for dead-lettering it (acemq dlq's Reason).
func reason(env runtime.Envelope, headers map[string]any) string {
	if env.Error != "" {
		return env.Error
	}
	if death, ok := runtime.BrokerDeath(headers); ok {
		return "dead-lettered by the broker: " + death.Reason
	}
	return ""
}

// dimValues are a message's values along each dimension.
func dimValues(src string, env runtime.Envelope, headers map[string]any) [nDims]string {
	v := [nDims]string{Fold(reason(env, headers)), src, env.Type, env.Origin}
	for i := range v {
		if v[i] == "" {
			v[i] = none
		}
	}
	return v
}

// maxReason is how much of a reason a row keeps (the page shows the rest
// when the message is opened).
const maxReason = 160

// row is what the index keeps of one message: no body, no headers.
type row struct {
	src     uint16 // index in Index.sources
	pos     int32  // its place in the queue when read (0 = head)
	attempt int32
	replays int32
	first   int64 // first seen, Unix ms; 0 unknown
	dims    [nDims]int32
	id      string
	reason  string // cut to maxReason
	key     Key
}

// group is the messages that share a value along a dimension.
type group struct {
	Key            string `json:"key"`
	Count          int    `json:"count"`
	Oldest, Newest int64  // first seen, Unix ms; 0 unknown
	Sample         string // one reason of the group, as written
	bySource       map[uint16]int
}

// Source is a queue the console reads: a .dlq or .parked.
type Source struct {
	Name    string `json:"name"`
	Owner   string `json:"owner"` // the queue it belongs to, "" for a named queue of no owner
	Missing bool   `json:"missing,omitempty"`
	Depth   int    `json:"depth"` // when the pass began
	Read    int    `json:"read"`
	Error   string `json:"error,omitempty"`
}

// Index is one pass over the sources: the groups along every dimension
// and a row per message, up to MaxRows rows (past them the groups still
// count every message). Safe for concurrent use.
type Index struct {
	mu      sync.RWMutex
	sources []Source
	names   [nDims]map[string]int32
	groups  [nDims][]*group
	rows    []row
	maxRows int
	dropped int // messages counted but not kept as rows

	started, firstGroup, finished time.Time
	read, total                   int
	running                       bool
	err                           string
}

func newIndex(sources []string, maxRows int) *Index {
	x := &Index{maxRows: maxRows, started: time.Now(), running: true}
	for _, s := range sources {
		x.sources = append(x.sources, Source{Name: s, Owner: ownerOf(s)})
	}
	for i := range x.names {
		x.names[i] = map[string]int32{}
	}
	return x
}

// add counts one message read from source si at pos.
func (x *Index) add(si uint16, pos int, d *runtime.Delivery) {
	src := x.sources[si].Name
	vals := dimValues(src, d.Envelope, d.Headers)
	why := reason(d.Envelope, d.Headers)
	var first int64
	if fs := d.Envelope.FirstSeen; !fs.IsZero() {
		first = fs.UnixMilli()
	}
	key := keyOf(d.Envelope, d.Body)
	x.mu.Lock()
	defer x.mu.Unlock()
	r := row{src: si, pos: int32(pos), attempt: int32(d.Envelope.Attempt), replays: int32(d.Envelope.ReplayCount),
		first: first, id: d.Envelope.ID, reason: cutText(why, maxReason), key: key}
	for dim, v := range vals {
		gi, ok := x.names[dim][v]
		if !ok {
			gi = int32(len(x.groups[dim]))
			x.names[dim][v] = gi
			x.groups[dim] = append(x.groups[dim], &group{Key: v, Sample: cutText(why, maxReason), bySource: map[uint16]int{}})
		}
		g := x.groups[dim][gi]
		g.Count++
		g.bySource[si]++
		if first != 0 {
			if g.Oldest == 0 || first < g.Oldest {
				g.Oldest = first
			}
			if first > g.Newest {
				g.Newest = first
			}
		}
		r.dims[dim] = gi
	}
	if len(x.rows) < x.maxRows {
		x.rows = append(x.rows, r)
	} else {
		x.dropped++
	}
	x.read++
	x.sources[si].Read++
	if x.firstGroup.IsZero() {
		x.firstGroup = time.Now()
	}
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// scan reads every source with Browse, in turn, into x; each source is
// locked while it is read.
func (s *Server) scan(ctx context.Context, x *Index) {
	defer func() {
		x.mu.Lock()
		x.running, x.finished = false, time.Now()
		x.mu.Unlock()
	}()
	for i := range x.sources {
		n, err := s.conn.MessageCount(ctx, x.sources[i].Name)
		x.mu.Lock()
		if errors.Is(err, runtime.ErrQueueNotFound) {
			x.sources[i].Missing = true
		} else if err != nil {
			x.sources[i].Error = s.scrub(err.Error())
		}
		x.sources[i].Depth = n
		x.total += n
		x.mu.Unlock()
	}
	for i := range x.sources {
		src := x.sources[i]
		if src.Missing || src.Error != "" || src.Depth == 0 {
			continue
		}
		unlock, err := s.locks.lock(ctx, src.Name)
		if err != nil {
			break
		}
		pos := 0
		_, err = s.conn.Browse(ctx, src.Name, 0, func(d *runtime.Delivery) error {
			x.add(uint16(i), pos, d)
			pos++
			return nil
		})
		unlock()
		if err != nil {
			x.mu.Lock()
			if ctx.Err() != nil {
				x.err = "the pass was stopped"
			} else {
				x.sources[i].Error = s.scrub(err.Error())
			}
			x.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// Filter narrows the messages a listing, a search or an action takes.
type Filter struct {
	Queue  string `json:"queue,omitempty"`
	Type   string `json:"type,omitempty"`
	Origin string `json:"origin,omitempty"`
	// Group: the messages of one group (By names its dimension).
	By    string `json:"by,omitempty"`
	Group string `json:"group,omitempty"`
}

// match says whether a message with these values passes f.
func (f Filter) match(vals [nDims]string) bool {
	if f.Queue != "" && vals[ByQueue] != f.Queue || f.Type != "" && vals[ByType] != f.Type || f.Origin != "" && vals[ByOrigin] != f.Origin {
		return false
	}
	if f.Group != "" {
		d, _ := dimOf(f.By)
		return vals[d] == f.Group
	}
	return true
}

func (f Filter) validate() error {
	if f.Group != "" {
		if _, ok := dimOf(f.By); !ok {
			return fmt.Errorf("group by %q: want reason, queue, type or origin", f.By)
		}
	}
	return nil
}

func (f Filter) narrows() bool { return f.Queue != "" || f.Type != "" || f.Origin != "" }

// rowValues are r's values along each dimension.
func (x *Index) rowValues(r *row) [nDims]string {
	var v [nDims]string
	for d := range v {
		v[d] = x.groups[d][r.dims[d]].Key
	}
	return v
}

// GroupView is a group as the page shows it.
type GroupView struct {
	Key     string         `json:"key"`
	Count   int            `json:"count"`
	Oldest  string         `json:"oldest,omitempty"`
	Newest  string         `json:"newest,omitempty"`
	Sample  string         `json:"sample,omitempty"`
	Sources map[string]int `json:"sources"`
}

// PassView is the state of the pass.
type PassView struct {
	Running     bool     `json:"running"`
	Read        int      `json:"read"`
	Total       int      `json:"total"`
	Rows        int      `json:"rows"`
	NotIndexed  int      `json:"not_indexed,omitempty"`
	Started     string   `json:"started"`
	Elapsed     float64  `json:"elapsed_s"`
	FirstGroupS float64  `json:"first_group_s,omitempty"`
	Rate        float64  `json:"rate"`
	Error       string   `json:"error,omitempty"`
	Sources     []Source `json:"sources"`
}

func stampMS(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func (x *Index) pass() PassView {
	end := time.Now()
	if !x.running {
		end = x.finished
	}
	el := end.Sub(x.started).Seconds()
	v := PassView{Running: x.running, Read: x.read, Total: x.total, Rows: len(x.rows), NotIndexed: x.dropped,
		Started: x.started.UTC().Format(time.RFC3339), Elapsed: el, Error: x.err, Sources: append([]Source(nil), x.sources...)}
	if !x.firstGroup.IsZero() {
		v.FirstGroupS = x.firstGroup.Sub(x.started).Seconds()
	}
	if el > 0 {
		v.Rate = float64(x.read) / el
	}
	return v
}

// Groups are the groups along dimension by, of the messages f passes
// (f's Group is not used), whose key holds q (any case), largest first,
// at most limit of them; and how many groups there are in all.
func (x *Index) Groups(by int, f Filter, q string, limit int) ([]GroupView, int, PassView) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	q = strings.ToLower(q)
	var list []*group
	if f.narrows() {
		// Counted again from the rows (each group's own counts are over
		// every message).
		gs := map[int32]*group{}
		for i := range x.rows {
			r := &x.rows[i]
			if !f.match(x.rowValues(r)) {
				continue
			}
			g := gs[r.dims[by]]
			if g == nil {
				src := x.groups[by][r.dims[by]]
				g = &group{Key: src.Key, Sample: src.Sample, bySource: map[uint16]int{}}
				gs[r.dims[by]] = g
			}
			g.Count++
			g.bySource[r.src]++
			if r.first != 0 {
				if g.Oldest == 0 || r.first < g.Oldest {
					g.Oldest = r.first
				}
				g.Newest = max(g.Newest, r.first)
			}
		}
		for _, g := range gs {
			list = append(list, g)
		}
	} else {
		list = append(list, x.groups[by]...)
	}
	if q != "" {
		kept := list[:0:0]
		for _, g := range list {
			if strings.Contains(strings.ToLower(g.Key), q) || strings.Contains(strings.ToLower(g.Sample), q) {
				kept = append(kept, g)
			}
		}
		list = kept
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Count != list[j].Count {
			return list[i].Count > list[j].Count
		}
		return list[i].Key < list[j].Key
	})
	all := len(list)
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	out := make([]GroupView, len(list))
	for i, g := range list {
		out[i] = GroupView{Key: g.Key, Count: g.Count, Oldest: stampMS(g.Oldest), Newest: stampMS(g.Newest), Sample: g.Sample, Sources: map[string]int{}}
		for si, n := range g.bySource {
			out[i].Sources[x.sources[si].Name] = n
		}
	}
	return out, all, x.pass()
}

// RowView is a message as the lists show it.
type RowView struct {
	Source    string `json:"source"`
	Pos       int    `json:"pos"`
	Key       string `json:"key"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Origin    string `json:"origin"`
	Attempt   int    `json:"attempt"`
	Replays   int    `json:"replays"`
	FirstSeen string `json:"first_seen,omitempty"`
	Reason    string `json:"reason"`
	Group     string `json:"group"`
}

func (x *Index) view(r *row) RowView {
	v := x.rowValues(r)
	return RowView{Source: x.sources[r.src].Name, Pos: int(r.pos), Key: r.key.String(), ID: r.id, Type: v[ByType],
		Origin: v[ByOrigin], Attempt: int(r.attempt), Replays: int(r.replays), FirstSeen: stampMS(r.first),
		Reason: r.reason, Group: v[ByReason]}
}

// Messages are the rows f passes, from offset, at most limit; and how
// many pass in all.
func (x *Index) Messages(f Filter, offset, limit int) ([]RowView, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []RowView
	n := 0
	for i := range x.rows {
		r := &x.rows[i]
		if !f.match(x.rowValues(r)) {
			continue
		}
		if n >= offset && len(out) < limit {
			out = append(out, x.view(r))
		}
		n++
	}
	return out, n
}

// count is how many messages f passes, per source: from the groups when
// f is a group alone, else from the rows.
func (x *Index) count(f Filter) map[string]int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[string]int{}
	if !f.narrows() && f.Group != "" {
		d, _ := dimOf(f.By)
		if gi, ok := x.names[d][f.Group]; ok {
			for si, n := range x.groups[d][gi].bySource {
				out[x.sources[si].Name] = n
			}
		}
		return out
	}
	for i := range x.rows {
		r := &x.rows[i]
		if f.match(x.rowValues(r)) {
			out[x.sources[r.src].Name]++
		}
	}
	return out
}

func (x *Index) sourceNames() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, len(x.sources))
	for i, s := range x.sources {
		out[i] = s.Name
	}
	return out
}
