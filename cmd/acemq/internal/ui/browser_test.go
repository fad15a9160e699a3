package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser: $ACEMQ_CHROMIUM, else Debian's chromium
// (make tools installs it). Missing, the test skips, or fails under
// CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ACEMQ_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium: the browser test needs it under CI=true (make tools installs Debian's chromium: apt-get install chromium)")
	}
	t.Skip("no chromium (apt-get install chromium, or make tools)")
	return ""
}

// browser starts a headless chromium with a fresh profile, and the flags
// this machine's closed network needs (no background connections).
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	must(t, chromedp.Do(ctx)) // start it now: a missing browser fails here
	return ctx
}

// page drives the console in the browser.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string // where screenshots go ($ACEMQ_UI_SCREENSHOTS), "" for none
}

func (p *page) run(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// do runs a JavaScript statement.
func (p *page) do(expr string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Evaluate[any](expr)); err != nil {
		p.t.Fatalf("browser: %s: %v", expr, err)
	}
}

// wait polls the JavaScript expression until it is true.
func (p *page) wait(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("waiting for %s (%s): %v\nthe page says:\n%s", what, expr, err, text)
	}
}

// eval evaluates a JavaScript expression into out (a pointer).
func (p *page) eval(expr string, out any) {
	p.t.Helper()
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		p.t.Fatalf("browser: %s: %v", expr, err)
	}
	must(p.t, json.Unmarshal(raw, out))
}

func (p *page) text(sel string) string {
	var s string
	p.eval(`(document.querySelector(`+js(sel)+`) || {}).textContent || ""`, &s)
	return s
}

func (p *page) screenshot(name string) {
	if p.dir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	must(p.t, err)
	must(p.t, os.WriteFile(filepath.Join(p.dir, name+".png"), png, 0o644))
}

// js is s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// groupRow is a JavaScript expression for the groups table's row of key.
func groupRow(key string) string {
	return `[...document.querySelectorAll('#groups tbody tr')].find((tr) => tr.dataset.group === ` + js(key) + `)`
}

// noScriptRan: nothing a dead letter carries ran, and no element came
// from one.
func (p *page) noScriptRan() {
	p.t.Helper()
	var pwned bool
	var scripts int
	p.eval(`window.pwned === true`, &pwned)
	p.eval(`document.querySelectorAll('main script, #message script, main img, #message img').length`, &scripts)
	if pwned || scripts != 0 {
		p.t.Fatalf("a dead letter's script ran (pwned %v) or made elements (%d)", pwned, scripts)
	}
}

// TestConsoleInBrowser drives the page in headless chromium as an
// operator would, over failed messages a real consumer made: the groups
// and counts, a dry run then a replay of one group (exactly it moves),
// the script tags shown as text, an invalid edit refused with the
// schema's message and a valid one received by the consumer, a discard
// into the archive, and the audit of all three; and the topology.
func TestConsoleInBrowser(t *testing.T) {
	s := newShop(t)
	ctx := browser(t)
	s.failures()
	s.serve(true)
	s.waitPass()
	p := &page{t: t, ctx: ctx, dir: os.Getenv("ACEMQ_UI_SCREENSHOTS")}
	dlq := s.orders + ".dlq"

	p.run(chromedp.Navigate(s.base + "/"))
	p.wait("the groups", groupRow(warehouseGroup)+` !== undefined && document.getElementById('pass-text').dataset.running === '0'`)
	var counts map[string]string
	p.eval(`Object.fromEntries([...document.querySelectorAll('#groups tbody tr')].map((tr) => [tr.dataset.group, tr.querySelector('.count').textContent]))`, &counts)
	want := map[string]string{warehouseGroup: "3", customerGroup: "2", scriptGroup: "1", parkedGroup: "1"}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Fatalf("the page's groups: %v, want %v", counts, want)
	}
	if got := p.text("#pass-text"); !strings.HasPrefix(got, "read: 7 of 7 messages") {
		t.Errorf("the pass: %q", got)
	}
	var keyText string
	p.eval(groupRow(scriptGroup)+`.querySelector('.group-link').textContent`, &keyText)
	if keyText != scriptGroup {
		t.Errorf("the script group shows %q", keyText)
	}
	p.noScriptRan()
	var disabled bool
	p.eval(groupRow(warehouseGroup)+`.querySelector('button.replay').disabled`, &disabled)
	if !disabled || p.text("#sign-in") == "" {
		t.Errorf("before signing in, replay is enabled (%v) or there is no sign-in form", !disabled)
	}
	p.screenshot("groups")

	// A search through the bodies: the customer is in no reason.
	p.run(chromedp.SendKeys(chromedp.ID("search"), "acme"), chromedp.Click(chromedp.CSS("#search-form button")))
	p.wait("the search's end", `document.getElementById('list-title').textContent.startsWith('Search "acme": 4 matches, read 7 of 7')`)
	var found []string
	p.eval(`[...document.querySelectorAll('#messages tbody a.open')].map((a) => a.textContent).sort()`, &found)
	if !slices.Equal(found, []string{"P-1", "W-1", "W-2", "W-3"}) {
		t.Errorf("the search lists %v", found)
	}
	p.screenshot("search")

	// Sign in.
	p.run(chromedp.SendKeys(chromedp.ID("token"), testToken), chromedp.Click(chromedp.CSS("#sign-in button")))
	p.wait("signed in", `document.getElementById('signed-in') !== null`)
	if got := p.text("#signed-in"); got != "signed in as alice " {
		t.Errorf("signed in: %q", got)
	}

	// A dry run of the warehouse group, then its replay.
	p.do(groupRow(warehouseGroup) + `.querySelector('button.dry').click()`)
	p.wait("the dry run", `document.getElementById('dryrun-summary') !== null`)
	if got := p.text("#dryrun-summary"); got != "dry run: would move 3, leave 3; nothing moved" {
		t.Errorf("dry run: %q", got)
	}
	if s.depth(dlq) != 6 || s.depth(s.orders) != 0 {
		t.Fatalf("the dry run moved something")
	}
	p.screenshot("dry-run")
	s.down.Store(false)
	p.do(groupRow(warehouseGroup) + `.querySelector('button.replay').click()`)
	p.wait("the confirmation", `!document.getElementById('confirm').classList.contains('hidden')`)
	if got := p.text("#confirm-text"); got != "Replay 3 messages of "+warehouseGroup+" to each message's own queue?" {
		t.Errorf("confirmation: %q", got)
	}
	p.run(chromedp.Click(chromedp.ID("confirm-yes")))
	p.wait("the replay's end", `[...document.querySelectorAll('#jobs-table tr[data-job]')].some((tr) => tr.dataset.state === 'done')`)
	if got := p.text("#jobs-table tr[data-job] .result"); got != "moved 3, skipped 3 (drained)" {
		t.Errorf("the replay's result: %q", got)
	}
	p.screenshot("replays")
	var got []string
	for range 3 {
		m, err := s.receive(20 * time.Second)
		if err != nil {
			t.Fatalf("the consumer got %v, then nothing", got)
		}
		got = append(got, m.Envelope.ID)
	}
	sort.Strings(got)
	if !slices.Equal(got, []string{"W-1", "W-2", "W-3"}) {
		t.Errorf("the consumer got %v", got)
	}
	s.waitDepth(dlq, 3)

	// The message with script tags: shown as text.
	p.run(chromedp.Click(chromedp.ID("tab-failed")))
	p.wait("the groups after the replay", groupRow(warehouseGroup)+` === undefined && `+groupRow(scriptGroup)+` !== undefined`)
	p.do(groupRow(scriptGroup) + `.querySelector('.group-link').click()`)
	p.wait("the group's messages", `document.querySelectorAll('#messages tbody a.open').length === 1`)
	p.do(`document.querySelector('#messages tbody a.open').click()`)
	p.wait("the message", `document.getElementById('message-body').textContent.includes('window.pwned')`)
	if body := p.text("#message-body"); !strings.Contains(body, `"comment": "<script>window.pwned = true</script><img src=x onerror=\"window.pwned=true\">"`) {
		t.Errorf("the body shows %q", body)
	}
	if h := p.text("#message-headers"); !strings.Contains(h, `note<script>window.pwned = true</script>`) {
		t.Errorf("the headers show %q", h)
	}
	if title := p.text("#message-title"); title != "Message "+scriptID+" on "+dlq {
		t.Errorf("the title: %q", title)
	}
	p.noScriptRan()
	p.screenshot("message")
	p.run(chromedp.Click(chromedp.ID("message-close")))

	// Edit and retry C-1: invalid first, then valid.
	p.do(groupRow(customerGroup) + `.querySelector('.group-link').click()`)
	p.wait("C-1 listed", `[...document.querySelectorAll('#messages tbody a.open')].some((a) => a.textContent === 'C-1')`)
	p.do(`[...document.querySelectorAll('#messages tbody a.open')].find((a) => a.textContent === 'C-1').click()`)
	p.wait("C-1 open", `document.getElementById('message-body').textContent.includes('"order_id": "C-1"') && !document.getElementById('message-edit').disabled`)
	p.run(chromedp.Click(chromedp.ID("message-edit")))
	setBody := func(body string) {
		p.do(`document.getElementById('edit-body').value = ` + js(body))
		p.run(chromedp.Click(chromedp.ID("edit-send")))
	}
	setBody(`{"order_id": "C-1", "quantity": 0, "customer": "globex"}`)
	p.wait("the schema's error", `document.querySelector('#edit-errors li.violation') !== null`)
	if v := p.text("#edit-errors li.violation"); !strings.HasPrefix(v, "/quantity: ") || !strings.Contains(v, "minimum") {
		t.Errorf("the invalid edit shows %q", v)
	}
	if got := p.text("#edit-result"); got != "nothing sent" {
		t.Errorf("after the invalid edit: %q", got)
	}
	p.screenshot("edit-invalid")
	if _, err := s.receive(300 * time.Millisecond); err == nil {
		t.Fatalf("an invalid edit reached the consumer")
	}
	setBody(`{"order_id": "C-1", "quantity": 1, "customer": "globex"}`)
	p.wait("the edit's result", `document.getElementById('edit-result').className === 'ok'`)
	if got := p.text("#edit-result"); got != "the edited copy was confirmed on "+s.orders+", the original acked" {
		t.Errorf("the valid edit: %q", got)
	}
	m, err := s.receive(20 * time.Second)
	if err != nil || m.Envelope.ID != "C-1" || m.Payload["customer"] != "globex" {
		t.Fatalf("the consumer got %+v (%v)", m, err)
	}
	p.run(chromedp.Click(chromedp.ID("message-close")))

	// Discard the script group into the archive.
	p.wait("the groups after the edit", groupRow(customerGroup)+` !== undefined && `+groupRow(customerGroup)+`.querySelector('.count').textContent === '1'`)
	p.do(groupRow(scriptGroup) + `.querySelector('button.discard').click()`)
	p.wait("the discard's confirmation", `!document.getElementById('confirm').classList.contains('hidden')`)
	if got := p.text("#confirm-text"); got != "Discard 1 message of "+scriptGroup+": move them to "+dlq+".archived? They are kept there, not deleted." {
		t.Errorf("the discard's confirmation: %q", got)
	}
	p.screenshot("discard-confirm")
	p.run(chromedp.Click(chromedp.ID("confirm-yes")))
	p.wait("the discard's end", `[...document.querySelectorAll('#jobs-table tr[data-job]')].filter((tr) => tr.dataset.state === 'done').length === 2`)
	if got := p.text("#jobs-table tr[data-job] .result"); got != "moved 1, skipped 1 (limit)" {
		t.Errorf("the discard's result: %q", got)
	}
	s.waitDepth(dlq+".archived", 1)

	// The audit shows all three.
	p.run(chromedp.Click(chromedp.ID("tab-audit")))
	p.wait("the audit", `document.querySelectorAll('#audit-table tbody tr.audit-discard').length === 2`)
	var audit []string
	p.eval(`[...document.querySelectorAll('#audit-table tbody tr')].map((tr) => [...tr.cells].slice(1).map((td) => td.textContent).join(' | '))`, &audit)
	all := strings.Join(audit, "\n")
	for _, w := range []string{
		"alice | replay | reason group \"" + warehouseGroup + "\" → each message's own queue | 3 | moved 3, skipped 3 (drained)",
		"alice | edit | message C-1 of " + dlq + " → " + s.orders + " | 1 | the edited copy was confirmed on " + s.orders + ", the original acked",
		"alice | edit | message C-1 of " + dlq + " |  | refused, nothing sent: ",
		"alice | discard | reason group \"" + scriptGroup + "\" → " + dlq + ".archived | 1 | moved 1, skipped 1 (limit)",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("the audit lacks %q:\n%s", w, all)
		}
	}
	p.screenshot("audit")

	// The topology: the queues with their depths.
	p.run(chromedp.Click(chromedp.ID("tab-topology")))
	// The management API samples depths every few seconds: the picture,
	// refreshed every 5 s, catches up.
	node := `[...document.querySelectorAll('#topo-svg g.node')].find((g) => g.dataset.name === ` + js(dlq) + `)`
	p.wait("the dlq's depth in the topology", node+` !== undefined && `+node+`.textContent.includes('depth 1 · consumers 0')`)
	p.wait("the queue's consumer in the topology", `[...document.querySelectorAll('#topo-svg g.node')].some((g) => g.dataset.name === `+js(s.orders)+` && g.textContent.includes('consumers 1'))`)
	p.screenshot("topology")
	p.noScriptRan()
}
