package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime/wire"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Reasons as the shop's failures are grouped.
const (
	warehouseGroup = `rejected by the handler: warehouse "…" is not answering for order #`
	customerGroup  = `rejected by the handler: order # has no customer`
	scriptGroup    = `rejected by the handler: order <script>alert("…")</script> has no customer`
	parkedGroup    = `parked by the handler: order # asks for a person`
)

func groupCounts(t *testing.T, c *client, query string) map[string]float64 {
	t.Helper()
	code, out, raw := c.do("GET", "/api/groups?"+query, nil)
	if code != 200 {
		t.Fatalf("groups: %d %s", code, raw)
	}
	got := map[string]float64{}
	for _, g := range out["groups"].([]any) {
		m := g.(map[string]any)
		got[m["key"].(string)] = m["count"].(float64)
	}
	return got
}

func ids(rows []any) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	sort.Strings(out)
	return out
}

// TestConsole runs the console over real dead letters and parked
// messages that a real consumer made: the groups and counts, filters, a
// search, a message opened, a dry run then a replay of one group, an
// invalid then a valid edit, a discard, and the audit of them all.
func TestConsole(t *testing.T) {
	s := newShop(t)
	s.failures()
	s.serve(true)
	p := s.waitPass()
	if p.Read != 7 || p.Total != 7 {
		t.Fatalf("the pass read %d of %d, want 7 of 7: %+v", p.Read, p.Total, p)
	}
	c := s.client()
	dlq, parked := s.orders+".dlq", s.orders+".parked"

	t.Run("groups", func(t *testing.T) {
		want := map[string]float64{warehouseGroup: 3, customerGroup: 2, scriptGroup: 1, parkedGroup: 1}
		if got := groupCounts(t, c, "by=reason"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("by reason: %v, want %v", got, want)
		}
		if got := groupCounts(t, c, "by=queue"); got[dlq] != 6 || got[parked] != 1 || len(got) != 2 {
			t.Errorf("by queue: %v", got)
		}
		if got := groupCounts(t, c, "by=type"); got["order.placed.v1"] != 7 {
			t.Errorf("by type: %v", got)
		}
		if got := groupCounts(t, c, "by=origin"); got["shop@test"] != 7 {
			t.Errorf("by origin: %v", got)
		}
		if got := groupCounts(t, c, "by=reason&queue="+parked); len(got) != 1 || got[parkedGroup] != 1 {
			t.Errorf("by reason in %s: %v", parked, got)
		}
		if got := groupCounts(t, c, "by=reason&q=warehouse"); len(got) != 1 || got[warehouseGroup] != 3 {
			t.Errorf("groups holding warehouse: %v", got)
		}
		_, out, _ := c.do("GET", "/api/groups?by=reason", nil)
		g := out["groups"].([]any)[0].(map[string]any)
		if g["key"] != warehouseGroup || g["oldest"] == "" || g["newest"] == "" || g["sources"].(map[string]any)[dlq] != 3.0 {
			t.Errorf("the largest group: %v", g)
		}
		_, out, _ = c.do("GET", "/api/messages?by=reason&group="+urlq(warehouseGroup), nil)
		if got := ids(out["messages"].([]any)); !slices.Equal(got, []string{"W-1", "W-2", "W-3"}) {
			t.Errorf("the warehouse group lists %v", got)
		}
	})

	t.Run("search", func(t *testing.T) {
		for q, want := range map[string][]string{
			"acme":                  {"P-1", "W-1", "W-2", "W-3"}, // the body's customer
			"window.pwned":          {scriptID},                   // a header and the body
			"north-2":               {"W-2"},                      // the reason's quoted value
			"no customer C-2":       {"C-2"},
			"shop@test asks":        {"P-1"},
			"nothing-has-this-w0rd": nil,
		} {
			code, _, raw := c.do("POST", "/api/search", map[string]any{"query": q})
			if code != http.StatusAccepted {
				t.Fatalf("search %q: %d %s", q, code, raw)
			}
			var out map[string]any
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				_, out, _ = c.do("GET", "/api/search", nil)
				if out["running"] == false {
					break
				}
			}
			var got []string
			if m, ok := out["matches"].([]any); ok {
				got = ids(m)
			}
			if !slices.Equal(got, want) || out["read"] != 7.0 {
				t.Errorf("search %q: %v after reading %v, want %v", q, got, out["read"], want)
			}
		}
	})

	var scriptRow map[string]any
	t.Run("message", func(t *testing.T) {
		_, out, _ := c.do("GET", "/api/messages?by=reason&group="+urlq(scriptGroup), nil)
		scriptRow = out["messages"].([]any)[0].(map[string]any)
		code, v, raw := c.do("GET", fmt.Sprintf("/api/message?source=%s&pos=%v&key=%s", urlq(dlq), scriptRow["pos"], scriptRow["key"]), nil)
		if code != 200 {
			t.Fatalf("open: %d %s", code, raw)
		}
		env := v["envelope"].(map[string]any)
		body := v["body"].(map[string]any)
		if env["id"] != scriptID || env["attempt"] != 1.0 || env["origin"] != "shop@test" || env["queue"] != s.orders || env["first_seen"] == "" {
			t.Errorf("envelope: %v", env)
		}
		if body["format"] != "json" || !strings.Contains(body["text"].(string), `"comment": "\u003cscript\u003ewindow.pwned = true`) && !strings.Contains(body["text"].(string), `<script>window.pwned = true</script>`) {
			t.Errorf("body: %v", body)
		}
		if v["reason"] != `rejected by the handler: order `+scriptID+` has no customer` || v["editable"] != true || v["target"] != s.orders {
			t.Errorf("reason %v, editable %v, target %v", v["reason"], v["editable"], v["target"])
		}
		found := false
		for _, h := range v["headers"].([]any) {
			if h := h.(map[string]any); h["name"] == "note" && h["value"] == `<script>window.pwned = true</script>` {
				found = true
			}
		}
		if !found {
			t.Errorf("headers: %v", v["headers"])
		}
		// The raw bytes: a download, never rendered.
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/message/raw?source=%s&pos=%v&key=%s", s.base, urlq(dlq), scriptRow["pos"], scriptRow["key"]), nil)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("raw: %v", resp.Header)
		}
		if s.depth(dlq) != 6 {
			t.Errorf("opening took a message: %s holds %d", dlq, s.depth(dlq))
		}
	})

	t.Run("security", func(t *testing.T) {
		sel := map[string]any{"selection": map[string]any{"filter": map[string]any{"by": "reason", "group": warehouseGroup}}}
		if code, out, _ := c.do("POST", "/api/replay", sel); code != http.StatusUnauthorized || out["error"] != "sign in with a token first" {
			t.Errorf("a replay before signing in: %d %v", code, out)
		}
		if code, _, _ := c.do("POST", "/api/login", map[string]string{"token": "wrong-token-0123456789"}); code != http.StatusUnauthorized {
			t.Errorf("a wrong token signs in: %d", code)
		}
		c.signIn(testToken)
		csrf := c.csrf
		c.csrf = ""
		if code, out, _ := c.do("POST", "/api/replay", sel); code != http.StatusForbidden || !strings.Contains(out["error"].(string), "CSRF") {
			t.Errorf("a replay without the CSRF token: %d %v", code, out)
		}
		c.csrf = "x" + csrf[1:] // hex has no x
		if code, _, _ := c.do("POST", "/api/replay", sel); code != http.StatusForbidden {
			t.Errorf("a replay with a wrong CSRF token: %d", code)
		}
		c.csrf = csrf
		// A form on another site can send neither the header nor the token.
		req, _ := http.NewRequest("POST", s.base+"/api/replay", strings.NewReader(`{}`))
		resp, err := c.http.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a POST without X-Acemq: %d", resp.StatusCode)
		}
		req, _ = http.NewRequest("POST", s.base+"/api/replay", strings.NewReader(`{}`))
		req.Header.Set("X-Acemq", "1")
		req.Header.Set("X-CSRF-Token", csrf)
		req.Header.Set("Origin", "http://evil.example")
		resp, err = c.http.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a POST from another origin: %d", resp.StatusCode)
		}
		// DNS rebinding: another host name is not served.
		req, _ = http.NewRequest("GET", s.base+"/api/session", nil)
		req.Host = "evil.example"
		resp, err = http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host evil.example: %d", resp.StatusCode)
		}
		resp, err = http.Get(s.base + "/")
		must(t, err)
		resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("CSP: %q", csp)
		}
		// A bearer token (a script) needs no CSRF token.
		b := s.client()
		b.bearer = testToken
		if code, out, _ := b.do("POST", "/api/jobs/nope/cancel", nil); code != http.StatusNotFound {
			t.Errorf("cancel with a bearer token: %d %v", code, out)
		}
		b.bearer = "wrong"
		if code, _, _ := b.do("POST", "/api/jobs/nope/cancel", nil); code != http.StatusUnauthorized {
			t.Errorf("cancel with a wrong bearer token: %d", code)
		}
	})

	t.Run("dry run and replay of a group", func(t *testing.T) {
		sel := map[string]any{"filter": map[string]any{"by": "reason", "group": warehouseGroup}}
		code, out, raw := c.do("POST", "/api/dryrun", map[string]any{"selection": sel})
		if code != 200 {
			t.Fatalf("dry run: %d %s", code, raw)
		}
		if out["summary"] != "dry run: would move 3, leave 3; nothing moved" || fmt.Sprint(out["targets"]) != "[3 to "+s.orders+"]" {
			t.Errorf("dry run: %v, %v", out["summary"], out["targets"])
		}
		if s.depth(dlq) != 6 || s.depth(s.orders) != 0 {
			t.Errorf("the dry run moved something")
		}
		// Onto a queue that does not exist: the dry run says each would
		// fail, the replay is refused before anything.
		missingTo := map[string]any{"selection": sel, "to": s.orders + ".gone"}
		s.srv.allowed = append(s.srv.allowed, s.orders+".gone")
		if code, out, _ := c.do("POST", "/api/dryrun", missingTo); code != 200 || out["summary"] != "dry run: would move 0, leave 3, fail 3; nothing moved" {
			t.Errorf("a dry run to a missing queue: %d %v", code, out["summary"])
		}
		if code, out, _ := c.do("POST", "/api/replay", missingTo); code != http.StatusConflict || !strings.Contains(fmt.Sprint(out["error"]), "queue "+s.orders+".gone does not exist") {
			t.Errorf("a replay to a missing queue: %d %v", code, out)
		}
		s.srv.allowed = s.srv.allowed[:len(s.srv.allowed)-1]
		// Onto a queue outside the manifest: refused before anything.
		if code, out, _ := c.do("POST", "/api/replay", map[string]any{"selection": sel, "to": "elsewhere"}); code != 400 || !strings.Contains(out["error"].(string), "replay target not allowed") {
			t.Errorf("replay to elsewhere: %d %v", code, out)
		}
		s.down.Store(false)
		code, out, raw = c.do("POST", "/api/replay", map[string]any{"selection": sel})
		if code != http.StatusAccepted {
			t.Fatalf("replay: %d %s", code, raw)
		}
		job := c.waitJob(out["job"].(string))
		if job["state"] != "done" || job["result"] != "moved 3, skipped 3 (drained)" || job["who"] != testName {
			t.Errorf("replay job: %v", job)
		}
		var got []string
		for range 3 {
			m, err := s.receive(20 * time.Second)
			if err != nil {
				t.Fatalf("the consumer got %v, then nothing", got)
			}
			got = append(got, m.Envelope.ID)
			if m.Envelope.Attempt != 1 || m.Envelope.ReplayCount != 1 {
				t.Errorf("%s: attempt %d, replay count %d", m.Envelope.ID, m.Envelope.Attempt, m.Envelope.ReplayCount)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, []string{"W-1", "W-2", "W-3"}) {
			t.Errorf("the consumer got %v", got)
		}
		s.waitDepth(dlq, 3)
		if m, err := s.receive(500 * time.Millisecond); err == nil {
			t.Errorf("the consumer also got %s", m.Envelope.ID)
		}
	})

	t.Run("edit", func(t *testing.T) {
		s.stopConsumer() // to read what arrives, headers and all
		s.waitPass()
		_, out, _ := c.do("GET", "/api/messages?by=reason&group="+urlq(customerGroup), nil)
		var c1 map[string]any
		for _, r := range out["messages"].([]any) {
			if r.(map[string]any)["id"] == "C-1" {
				c1 = r.(map[string]any)
			}
		}
		if c1 == nil {
			t.Fatalf("C-1 is not listed: %v", out)
		}
		edit := func(body string) (int, map[string]any) {
			code, out, _ := c.do("POST", "/api/edit", map[string]any{"source": c1["source"], "pos": c1["pos"], "key": c1["key"], "body": body})
			return code, out
		}
		code, out := edit(`{"order_id": "C-1", "quantity": 0, "customer": "globex"}`)
		vs, _ := out["violations"].([]any)
		if code != http.StatusUnprocessableEntity || len(vs) != 1 || vs[0].(map[string]any)["location"] != "/quantity" ||
			!strings.Contains(vs[0].(map[string]any)["message"].(string), "minimum") {
			t.Errorf("an invalid edit: %d %v", code, out)
		}
		if code, out := edit(`{"order_id": "C-1", "quantity": 1, "customer": 7}`); code != 422 || !strings.Contains(fmt.Sprint(out["violations"]), "/customer") {
			t.Errorf("a customer that is a number: %d %v", code, out)
		}
		if code, _ := edit(`{"order_id": "C-1",`); code != 422 {
			t.Errorf("an edit that is not JSON: %d", code)
		}
		if s.depth(s.orders) != 0 || s.depth(dlq) != 3 {
			t.Fatalf("an invalid edit sent something")
		}
		code, out = edit("{\n  \"order_id\": \"C-1\",\n  \"quantity\": 1,\n  \"customer\": \"globex\"\n}")
		if code != 200 || out["result"] != "the edited copy was confirmed on "+s.orders+", the original acked" {
			t.Fatalf("a valid edit: %d %v", code, out)
		}
		s.waitDepth(s.orders, 1)
		s.waitDepth(dlq, 2)
		_, ch := brokertest.Raw(t)
		d, ok, err := ch.Get(s.orders, true)
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		h := d.Headers
		if !strings.HasSuffix(fmt.Sprint(h[HeaderEdited]), " by "+testName) || h[wire.HeaderID] != "C-1" || d.MessageId != "C-1" ||
			h[wire.HeaderFirstSeen] == nil || fmt.Sprint(h[wire.HeaderAttempt]) != "1" || h[wire.HeaderError] != nil || h[wire.HeaderQueue] != nil ||
			h[wire.HeaderOrigin] != "shop@test" || h[wire.HeaderReplayedFrom] != dlq {
			t.Errorf("the edited copy's headers: %v", h)
		}
		var body map[string]any
		if json.Unmarshal(d.Body, &body) != nil || body["customer"] != "globex" || d.ContentType != wire.ContentTypeJSON || d.Type != "order.placed.v1" {
			t.Errorf("the edited copy: %s %s %s", d.Body, d.ContentType, d.Type)
		}
		s.startConsumer()
	})

	t.Run("discard", func(t *testing.T) {
		s.waitPass()
		sel := map[string]any{"filter": map[string]any{"by": "reason", "group": scriptGroup}}
		code, out, _ := c.do("POST", "/api/discard", map[string]any{"selection": sel, "confirm_count": 5})
		if code != http.StatusConflict || out["count"] != 1.0 || fmt.Sprint(out["archive"]) != "["+dlq+".archived]" {
			t.Errorf("a discard confirmed with the wrong count: %d %v", code, out)
		}
		code, out, raw := c.do("POST", "/api/discard", map[string]any{"selection": sel, "confirm_count": 1})
		if code != http.StatusAccepted {
			t.Fatalf("discard: %d %s", code, raw)
		}
		job := c.waitJob(out["job"].(string))
		if job["state"] != "done" || job["result"] != "moved 1, skipped 1 (limit)" {
			t.Errorf("discard job: %v", job)
		}
		s.waitDepth(dlq+".archived", 1)
		s.waitDepth(dlq, 1)
		_, ch := brokertest.Raw(t)
		d, ok, err := ch.Get(dlq+".archived", false)
		if err != nil || !ok || d.Headers[wire.HeaderID] != scriptID || !strings.Contains(fmt.Sprint(d.Headers[wire.HeaderError]), "has no customer") {
			t.Errorf("the archive holds %v (%v %v)", d.Headers, ok, err)
		}
	})

	t.Run("audit", func(t *testing.T) {
		_, out, _ := c.do("GET", "/api/audit", nil)
		var lines []string
		for _, e := range out["entries"].([]any) {
			m := e.(map[string]any)
			if m["result"] == nil || strings.HasPrefix(m["result"].(string), "started") {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s %s %v %v", m["who"], m["action"], m["count"], m["result"]))
		}
		slices.Reverse(lines)
		want := []string{
			"? replay <nil> refused: sign in with a token first",
			"? sign-in <nil> refused: not a token of the console",
			"alice sign-in <nil> signed in",
			"? replay <nil> refused: the request's CSRF token is missing or wrong",
			"? replay <nil> refused: the request's CSRF token is missing or wrong",
			"? replay <nil> refused: no X-Acemq: 1 header",
			"? replay <nil> refused: the request comes from another site (http://evil.example)",
			"? cancel <nil> refused: the bearer token is not one of the console's",
			"alice replay 3 moved 3, skipped 3 (drained)",
			"alice edit <nil> refused, nothing sent: ",
			"alice edit <nil> refused, nothing sent: ",
			"alice edit <nil> refused, nothing sent: ",
			"alice edit 1 the edited copy was confirmed on " + s.orders + ", the original acked",
			"alice discard 1 moved 1, skipped 1 (limit)",
		}
		if len(lines) != len(want) {
			t.Fatalf("audit:\n%s", strings.Join(lines, "\n"))
		}
		for i := range want {
			if !strings.HasPrefix(lines[i], want[i]) {
				t.Errorf("audit line %d: %q, want %q", i, lines[i], want[i])
			}
		}
		file, err := os.ReadFile(filepath.Join(s.dir, "acemq-audit.jsonl"))
		must(t, err)
		if n := strings.Count(string(file), "\n"); n != len(out["entries"].([]any)) || !strings.Contains(string(file), `"action":"discard"`) {
			t.Errorf("the audit file has %d lines:\n%s", n, file)
		}
	})

	t.Run("no password", func(t *testing.T) {
		_, pass, _ := credentials(s.url)
		secret := ":" + pass + "@"
		for _, path := range []string{"/api/session", "/api/groups", "/api/audit", "/api/jobs", "/api/topology", "/api/search"} {
			_, _, raw := c.do("GET", path, nil)
			if strings.Contains(raw, secret) {
				t.Errorf("%s shows the password: %s", path, raw)
			}
		}
		_, out, _ := c.do("GET", "/api/session", nil)
		if !strings.Contains(out["broker"].(string), ":xxxxx@") {
			t.Errorf("the broker shown: %v", out["broker"])
		}
		if strings.Contains(s.logs.String(), secret) {
			t.Errorf("the log shows the password")
		}
	})
}

// A console without a token is read-only: it reads, it refuses actions
// and sign-ins.
func TestConsoleReadOnly(t *testing.T) {
	s := newShop(t)
	s.publish(order{"order_id": "C-9", "quantity": 1})
	s.waitDepth(s.orders+".dlq", 1)
	// One the broker dead-letters itself: expired, with no consumer.
	s.stopConsumer()
	_, ch := brokertest.Raw(t)
	must(t, ch.Publish(s.q+".ex", "order.placed", false, false, amqp.Publishing{MessageId: "E-1", Type: "order.placed.v1",
		ContentType: "application/json", Expiration: "1", Body: []byte(`{"order_id":"E-1","quantity":1}`)}))
	s.waitDepth(s.orders+".dlq", 2)
	s.serve(false)
	s.waitPass()
	c := s.client()
	if got := groupCounts(t, c, "by=reason"); got[customerGroup] != 1 || got["dead-lettered by the broker: expired"] != 1 {
		t.Errorf("groups: %v", got)
	}
	_, out, _ := c.do("GET", "/api/messages?by=reason&group="+urlq("dead-lettered by the broker: expired"), nil)
	row := out["messages"].([]any)[0].(map[string]any)
	code, v, raw := c.do("GET", fmt.Sprintf("/api/message?source=%s&pos=%v&key=%s", urlq(s.orders+".dlq"), row["pos"], row["key"]), nil)
	if code != 200 {
		t.Fatalf("open: %d %s", code, raw)
	}
	deaths, _ := v["deaths"].([]any)
	if len(deaths) != 1 || deaths[0].(map[string]any)["queue"] != s.orders || deaths[0].(map[string]any)["reason"] != "expired" ||
		deaths[0].(map[string]any)["count"] != "1" || v["target"] != s.orders || v["envelope"].(map[string]any)["id"] != "E-1" {
		t.Errorf("the death history: %v, target %v", deaths, v["target"])
	}
	code, dry, _ := c.do("POST", "/api/dryrun", map[string]any{"selection": map[string]any{"filter": map[string]any{"by": "queue", "group": s.orders + ".dlq"}}})
	if code != 200 || dry["summary"] != "dry run: would move 2, leave 0; nothing moved" {
		t.Errorf("a dry run on a read-only console: %d %v", code, dry)
	}
	_, out, _ = c.do("GET", "/api/session", nil)
	if out["read_only"] != true {
		t.Errorf("session: %v", out)
	}
	if code, _, _ := c.do("POST", "/api/login", map[string]string{"token": testToken}); code != http.StatusForbidden {
		t.Errorf("sign in on a read-only console: %d", code)
	}
	c.bearer = testToken
	sel := map[string]any{"selection": map[string]any{"filter": map[string]any{"by": "reason", "group": customerGroup}}, "confirm_count": 1}
	for _, path := range []string{"/api/replay", "/api/discard", "/api/edit"} {
		if code, out, _ := c.do("POST", path, sel); code != http.StatusForbidden || !strings.Contains(fmt.Sprint(out["error"]), "read-only") {
			t.Errorf("%s on a read-only console: %d %v", path, code, out)
		}
	}
	if s.depth(s.orders+".dlq") != 2 {
		t.Errorf("a read-only console moved a message")
	}
}

// A replay at a rate limit moves at that rate, shows its progress, and
// stops when cancelled, in the runtime's words; one message replays alone.
func TestReplayRateCancelAndOne(t *testing.T) {
	s := newShop(t)
	s.stopConsumer()
	dlq := s.orders + ".dlq"
	_, ch := brokertest.Raw(t)
	must(t, ch.Confirm(false))
	for i := range 40 {
		id := fmt.Sprintf("R-%02d", i)
		dc, err := ch.PublishWithDeferredConfirm("", dlq, true, false, amqp.Publishing{MessageId: id, Type: "order.placed.v1",
			ContentType: "application/json", Body: []byte(`{"order_id":"` + id + `","quantity":1}`),
			Headers: amqp.Table{wire.HeaderID: id, wire.HeaderQueue: s.orders, wire.HeaderError: "gave up after 5 attempts: order " + id + " timed out after 30s",
				wire.HeaderAttempt: int64(5), wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z", wire.HeaderOrigin: "shop@test"}})
		must(t, err)
		if !dc.Wait() {
			t.Fatal("nacked")
		}
	}
	s.serve(true)
	s.waitPass()
	c := s.client()
	c.signIn(testToken)
	if got := groupCounts(t, c, "by=reason"); got["gave up after # attempts: order # timed out after #"] != 40 {
		t.Fatalf("groups: %v", got)
	}
	sel := map[string]any{"filter": map[string]any{"by": "reason", "group": "gave up after # attempts: order # timed out after #"}}
	_, out, _ := c.do("POST", "/api/replay", map[string]any{"selection": sel, "rate": 10, "keep_attempts": true})
	id := out["job"].(string)
	time.Sleep(1500 * time.Millisecond)
	_, jobs, _ := c.do("GET", "/api/jobs", nil)
	running := jobs["jobs"].([]any)[0].(map[string]any)
	if running["state"] != "running" || running["selected"].(float64) < 8 || running["selected"].(float64) > 20 || running["expected"] != 40.0 {
		t.Errorf("after 1.5 s at 10 msg/s: %v", running)
	}
	c.do("POST", "/api/jobs/"+id+"/cancel", nil)
	job := c.waitJob(id)
	moved := int(job["moved"].(float64))
	if job["state"] != "cancelled" || !strings.HasPrefix(job["result"].(string), fmt.Sprintf("moved %d, skipped ", moved)) ||
		!strings.HasSuffix(job["result"].(string), "(cancelled)") || moved == 0 || moved >= 40 {
		t.Errorf("cancelled job: %v", job)
	}
	if d, q := s.depth(dlq), s.depth(s.orders); d+q != 40 || q != moved {
		t.Errorf("after the cancel: %d on %s, %d on %s (moved %d)", d, dlq, q, s.orders, moved)
	}
	// The attempts were kept.
	_, ch2 := brokertest.Raw(t)
	if d, ok, _ := ch2.Get(s.orders, false); !ok || fmt.Sprint(d.Headers[wire.HeaderAttempt]) != "5" || d.Headers[wire.HeaderError] == nil {
		t.Errorf("kept attempts: %v", d.Headers)
	}
	// One message, chosen in the list.
	s.waitPass()
	_, list, _ := c.do("GET", "/api/messages?by=reason&group="+urlq("gave up after # attempts: order # timed out after #")+"&offset=3&limit=1", nil)
	one := list["messages"].([]any)[0].(map[string]any)
	before := s.depth(s.orders)
	_, out, _ = c.do("POST", "/api/replay", map[string]any{"selection": map[string]any{"messages": []any{one}}})
	job = c.waitJob(out["job"].(string))
	if !strings.HasPrefix(job["result"].(string), "moved 1, skipped ") || job["what"] != "message "+one["key"].(string)+" of "+dlq {
		t.Errorf("one message: %v", job)
	}
	if s.depth(s.orders) != before+1 {
		t.Errorf("one message moved %d", s.depth(s.orders)-before)
	}
}

func urlq(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", "+", "%2B", " ", "%20", "\"", "%22", "<", "%3C", ">", "%3E").Replace(s)
}

var _ = context.Background

// A discard moves the count its confirmation named, never more: messages
// of the group that arrive after the pass counted it stay where they are.
func TestDiscardMovesTheConfirmedCount(t *testing.T) {
	s := newShop(t)
	s.stopConsumer()
	dlq := s.orders + ".dlq"
	_, ch := brokertest.Raw(t)
	must(t, ch.Confirm(false))
	put := func(from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprintf("D-%02d", i)
			dc, err := ch.PublishWithDeferredConfirm("", dlq, true, false, amqp.Publishing{MessageId: id, Type: "order.placed.v1",
				ContentType: "application/json", Body: []byte(`{"order_id":"` + id + `","quantity":1}`),
				Headers: amqp.Table{wire.HeaderID: id, wire.HeaderQueue: s.orders, wire.HeaderError: "order " + id + " is cursed",
					wire.HeaderAttempt: int64(1), wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z", wire.HeaderOrigin: "shop@test"}})
			must(t, err)
			if !dc.Wait() {
				t.Fatal("nacked")
			}
		}
	}
	put(0, 3)
	s.serve(true)
	s.waitPass()
	c := s.client()
	c.signIn(testToken)
	const group = "order # is cursed"
	if got := groupCounts(t, c, "by=reason"); got[group] != 3 {
		t.Fatalf("groups: %v", got)
	}
	put(3, 5) // after the pass: the page still says 3
	sel := map[string]any{"filter": map[string]any{"by": "reason", "group": group}}
	// An archive is no queue a consumer reads: a discard there would be a
	// replay without the replay's rules.
	code, out, raw := c.do("POST", "/api/discard", map[string]any{"selection": sel, "confirm_count": 3, "archive": s.orders})
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(out["error"]), "archive "+s.orders+" is a queue of the manifest, read by its consumer") {
		t.Errorf("a discard into %s: %d %s", s.orders, code, raw)
	}
	if s.depth(s.orders) != 0 || s.depth(dlq) != 5 {
		t.Fatalf("a refused discard moved something")
	}
	code, out, raw = c.do("POST", "/api/discard", map[string]any{"selection": sel, "confirm_count": 3})
	if code != http.StatusAccepted {
		t.Fatalf("discard: %d %s", code, raw)
	}
	job := c.waitJob(out["job"].(string))
	if job["state"] != "done" || job["moved"] != 3.0 || !strings.HasPrefix(job["result"].(string), "moved 3") {
		t.Errorf("discard job: %v", job)
	}
	s.waitDepth(dlq+".archived", 3)
	if d, a := s.depth(dlq), s.depth(dlq+".archived"); d != 2 || a != 3 {
		t.Errorf("after a discard of 3 confirmed: %d on %s, %d archived", d, dlq, a)
	}
}
