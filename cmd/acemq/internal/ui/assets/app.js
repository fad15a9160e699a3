// acemq console. Every text from the server is put into the page with
// textContent (never innerHTML): a dead letter is untrusted input.
'use strict';

const $ = (id) => document.getElementById(id);
let session = { read_only: true, signed_in: false };
let state = { by: 'reason', group: null, offset: 0, list: [], selected: new Map(), search: null };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }

async function api(method, path, body) {
  const opts = { method, headers: { 'X-Acemq': '1' }, credentials: 'same-origin' };
  if (session.csrf) opts.headers['X-CSRF-Token'] = session.csrf;
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let data = {};
  try { data = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const err = new Error(data.error || (r.status + ' ' + r.statusText));
    err.status = r.status;
    err.data = data;
    throw err;
  }
  return data;
}

function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) u.set(k, v);
  return u.toString();
}

// --- session -------------------------------------------------------------

async function loadSession() {
  session = await api('GET', '/api/session');
  $('where').textContent = (session.manifest || '') + ' · ' + (session.broker || '');
  const s = clear($('session'));
  if (session.read_only) {
    s.append(el('span', { id: 'read-only', title: 'start acemq ui with --token or --token-file to allow actions' }, 'read-only'));
  } else if (session.signed_in) {
    s.append(el('span', { id: 'signed-in' }, 'signed in as ' + session.name + ' '),
      el('button', { id: 'sign-out', onclick: async () => { await api('POST', '/api/logout'); session.csrf = ''; loadSession(); } }, 'Sign out'));
  } else {
    const input = el('input', { id: 'token', type: 'password', placeholder: 'token', autocomplete: 'current-password' });
    const msg = el('span', { id: 'sign-in-error', class: 'error' });
    s.append(el('form', { id: 'sign-in', onsubmit: async (ev) => {
      ev.preventDefault();
      try { await api('POST', '/api/login', { token: input.value }); input.value = ''; await loadSession(); }
      catch (e) { msg.textContent = ' ' + e.message; }
    } }, input, ' ', el('button', { type: 'submit' }, 'Sign in'), msg));
  }
  const to = $('to');
  if (to.options.length === 1) for (const q of session.allowed || []) to.append(el('option', { value: q }, q));
  for (const b of document.querySelectorAll('button.act')) b.disabled = !session.signed_in;
  renderGroupsActions();
}

// --- tabs ----------------------------------------------------------------

let tab = 'failed';
function show(name) {
  tab = name;
  if (location.hash !== '#' + name) history.replaceState(null, '', '#' + name);
  for (const p of document.querySelectorAll('.panel')) p.classList.toggle('hidden', p.id !== name);
  for (const t of document.querySelectorAll('.tab')) t.classList.toggle('on', t.dataset.tab === name);
  if (name === 'audit') loadAudit();
  if (name === 'topology') loadTopology();
  if (name === 'jobs') loadJobs();
}

// --- groups --------------------------------------------------------------

function filters() {
  return { queue: $('f-queue').value.trim(), type: $('f-type').value.trim(), origin: $('f-origin').value.trim() };
}

let lastPass = null;
async function loadGroups() {
  const f = filters();
  const data = await api('GET', '/api/groups?' + qs({ by: state.by, q: $('f-q').value.trim(), ...f }));
  lastPass = data.pass;
  const p = data.pass;
  const pct = p.total > 0 ? Math.min(100, 100 * p.read / p.total) : (p.running ? 0 : 100);
  $('pass-bar').style.width = pct + '%';
  let text = (p.running ? 'reading: ' : 'read: ') + p.read + ' of ' + p.total + ' messages';
  text += ' in ' + p.elapsed_s.toFixed(1) + ' s (' + Math.round(p.rate) + ' msg/s)';
  if (p.not_indexed) text += '; ' + p.not_indexed + ' counted but not listed (the index is full)';
  for (const src of p.sources) {
    if (src.error) text += '; ' + src.name + ': ' + src.error;
  }
  if (p.error) text += '; ' + p.error;
  $('pass-text').textContent = text;
  $('pass-text').dataset.running = p.running ? '1' : '0';
  $('groups-key').textContent = state.by[0].toUpperCase() + state.by.slice(1);
  const body = clear($('groups').tBodies[0]);
  for (const g of data.groups) {
    const queues = Object.entries(g.sources).map(([q, n]) => q + ' (' + n + ')').join(', ');
    const tr = el('tr', { 'data-group': g.key },
      el('td', { class: 'num count' }, g.count),
      el('td', { class: 'key' }, el('a', { href: '#', class: 'group-link', onclick: (ev) => { ev.preventDefault(); openGroup(g.key); } }, g.key),
        g.sample && g.sample !== g.key && state.by === 'reason' ? el('div', { class: 'muted sample' }, 'e.g. ' + g.sample) : null),
      el('td', {}, g.oldest || '-'), el('td', {}, g.newest || '-'),
      el('td', {}, queues),
      el('td', {},
        el('button', { class: 'dry', onclick: () => dryRun(groupSelection(g.key)) }, 'Dry run'), ' ',
        el('button', { class: 'act replay', onclick: () => replay(groupSelection(g.key), g.count, g.key) }, 'Replay'), ' ',
        el('button', { class: 'act discard', onclick: () => discard(groupSelection(g.key), g.count, g.key) }, 'Discard')));
    body.append(tr);
  }
  if (data.groups.length === 0) body.append(el('tr', {}, el('td', { colspan: 6, class: 'muted' }, p.running ? 'reading…' : 'no failed messages')));
  $('groups-more').textContent = data.groups_total > data.groups.length ? (data.groups_total - data.groups.length) + ' smaller groups not shown: filter to find them' : '';
  renderGroupsActions();
  if (state.group !== null && !state.search) loadList();
}

function renderGroupsActions() {
  for (const b of document.querySelectorAll('button.act')) b.disabled = !session.signed_in;
}

function groupSelection(key) {
  return { filter: { by: state.by, group: key, ...filters() } };
}

// --- message lists -------------------------------------------------------

function openGroup(key) {
  state.group = key; state.offset = 0; state.search = null; state.selected.clear();
  loadList();
}

async function loadList() {
  const box = $('list');
  box.classList.remove('hidden');
  let rows, total;
  if (state.search) {
    const s = await api('GET', '/api/search');
    rows = s.matches || [];
    total = rows.length;
    $('list-title').textContent = 'Search "' + (s.query || '') + '": ' + rows.length + (s.more ? '+' + s.more : '') + ' matches, ' +
      (s.running ? 'reading ' : 'read ') + s.read + ' of ' + s.total + (s.error ? ' — ' + s.error : '');
    if (s.running) setTimeout(loadList, 500);
    rows = rows.slice(state.offset, state.offset + 50);
  } else {
    const data = await api('GET', '/api/messages?' + qs({ by: state.by, group: state.group, offset: state.offset, limit: 50, ...filters() }));
    rows = data.messages; total = data.total;
    $('list-title').textContent = state.by + ': ' + state.group + ' — ' + total + ' messages';
  }
  $('list-page').textContent = total ? (state.offset + 1) + '–' + Math.min(total, state.offset + 50) + ' of ' + total : '';
  state.total = total;
  state.list = rows;
  const body = clear($('messages').tBodies[0]);
  for (const m of rows) {
    const id = m.source + '/' + m.key;
    const cb = el('input', { type: 'checkbox', class: 'sel', onchange: (ev) => { if (ev.target.checked) state.selected.set(id, m); else state.selected.delete(id); } });
    cb.checked = state.selected.has(id);
    body.append(el('tr', { 'data-key': m.key },
      el('td', {}, cb),
      el('td', { class: 'key' }, el('a', { href: '#', class: 'open', onclick: (ev) => { ev.preventDefault(); openMessage(m); } }, m.id || '(no id)')),
      el('td', {}, m.type), el('td', { class: 'num' }, m.attempt), el('td', {}, m.first_seen || '-'),
      el('td', {}, m.source), el('td', { class: 'reason' }, m.reason)));
  }
}

function selection() {
  return { messages: [...state.selected.values()].map((m) => ({ source: m.source, pos: m.pos, key: m.key })) };
}

// --- actions -------------------------------------------------------------

function replayOptions() {
  const rate = parseFloat($('rate').value) || 0;
  const limit = parseInt($('limit').value, 10) || 0;
  return { keep_attempts: $('keep').checked, to: $('to').value, rate, limit };
}

async function dryRun(sel) {
  const box = clear($('dryrun'));
  box.classList.remove('hidden');
  box.append(el('p', { class: 'muted' }, 'dry run: reading…'));
  try {
    const r = await api('POST', '/api/dryrun', { selection: sel, ...replayOptions() });
    clear(box);
    box.append(el('h2', {}, 'Dry run'), el('p', { id: 'dryrun-summary' }, r.summary),
      el('p', {}, r.targets.length ? 'where: ' + r.targets.join(', ') : 'nothing would move'));
    const t = el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Would'), el('th', {}, 'Id'), el('th', {}, 'Type'), el('th', {}, 'To'), el('th', {}, 'Why'))));
    const tb = el('tbody');
    for (const l of r.lines) tb.append(el('tr', {}, el('td', {}, l.action), el('td', {}, l.id), el('td', {}, l.type), el('td', {}, l.target || '-'), el('td', {}, l.why)));
    t.append(tb);
    box.append(t);
  } catch (e) {
    clear(box).append(el('p', { class: 'error' }, e.message));
  }
}

function ask(text) {
  return new Promise((resolve) => {
    $('confirm-text').textContent = text;
    $('confirm').classList.remove('hidden');
    const done = (v) => { $('confirm').classList.add('hidden'); $('confirm-yes').onclick = null; $('confirm-no').onclick = null; resolve(v); };
    $('confirm-yes').onclick = () => done(true);
    $('confirm-no').onclick = () => done(false);
  });
}

async function replay(sel, count, what) {
  const o = replayOptions();
  const where = o.to || "each message's own queue";
  if (!await ask('Replay ' + count + ' message' + (count === 1 ? '' : 's') + ' of ' + what + ' to ' + where + (o.rate ? ' at ' + o.rate + ' msg/s' : '') + '?')) return;
  try {
    await api('POST', '/api/replay', { selection: sel, ...o });
    show('jobs');
  } catch (e) { alertBox(e.message); }
}

async function discard(sel, count, what) {
  const archive = $('archive').value.trim();
  let r;
  try {
    // The server answers the count and the archive it would use: the
    // confirmation names them, and the server checks the count again.
    r = await api('POST', '/api/discard', { selection: sel, archive, confirm_count: -1 });
  } catch (e) {
    if (e.status !== 409 || e.data.count === undefined) { alertBox(e.message); return; }
    r = e.data;
  }
  if (!await ask('Discard ' + r.count + ' message' + (r.count === 1 ? '' : 's') + ' of ' + what + ': move them to ' + r.archive.join(', ') + '? They are kept there, not deleted.')) return;
  try {
    await api('POST', '/api/discard', { selection: sel, archive, confirm_count: r.count });
    show('jobs');
  } catch (e) { alertBox(e.message); }
}

function alertBox(text) {
  $('confirm-text').textContent = text;
  $('confirm').classList.remove('hidden');
  $('confirm-yes').onclick = () => $('confirm').classList.add('hidden');
  $('confirm-no').onclick = () => $('confirm').classList.add('hidden');
}

// --- one message ---------------------------------------------------------

let current = null;
async function openMessage(m) {
  current = m;
  $('message').classList.remove('hidden');
  $('edit').classList.add('hidden');
  $('message-title').textContent = 'Message ' + (m.id || '(no id)') + ' on ' + m.source;
  $('message-error').textContent = 'reading…';
  for (const id of ['message-envelope', 'message-headers']) clear($(id));
  clear($('message-deaths').tBodies[0]);
  $('message-body').textContent = '';
  $('message-reason').textContent = '';
  $('message-raw').href = '/api/message/raw?' + qs({ source: m.source, pos: m.pos, key: m.key });
  try {
    const v = await api('GET', '/api/message?' + qs({ source: m.source, pos: m.pos, key: m.key }));
    current.view = v;
    $('message-error').textContent = '';
    const env = $('message-envelope');
    for (const [k, val] of Object.entries(v.envelope)) if (val !== '' && val !== 0 || k === 'attempt') env.append(el('tr', {}, el('td', {}, k), el('td', {}, val)));
    $('message-reason').textContent = v.reason;
    const hs = $('message-headers');
    for (const h of v.headers || []) hs.append(el('tr', {}, el('td', {}, h.name), el('td', {}, h.value)));
    const ds = $('message-deaths').tBodies[0];
    for (const d of v.deaths || []) ds.append(el('tr', {}, el('td', {}, d.queue || ''), el('td', {}, d.reason || ''), el('td', {}, d.count || ''), el('td', {}, d.exchange || ''), el('td', {}, d.time || '')));
    if (!(v.deaths || []).length) ds.append(el('tr', {}, el('td', { colspan: 5, class: 'muted' }, 'the broker never dead-lettered it')));
    const b = v.body;
    $('message-body-info').textContent = b.format + ', ' + b.size + ' bytes' + (b.schema ? ', read with ' + b.schema : '') + (b.error ? ' — ' + b.error : '');
    $('message-body').textContent = b.text || (b.format === 'binary' || b.error ? '(use Raw bytes)' : '');
    $('message-edit').disabled = !session.signed_in || !v.editable || !b.text;
    $('edit-target').textContent = v.target || '(no queue)';
  } catch (e) {
    $('message-error').textContent = e.message;
  }
}

function startEdit() {
  if (!current || !current.view) return;
  $('edit').classList.remove('hidden');
  $('edit-body').value = current.view.body.text;
  clear($('edit-errors'));
  $('edit-result').textContent = '';
}

async function sendEdit() {
  const errs = clear($('edit-errors'));
  $('edit-result').textContent = 'checking…';
  try {
    const r = await api('POST', '/api/edit', { source: current.source, pos: current.pos, key: current.key, body: $('edit-body').value });
    $('edit-result').textContent = r.result;
    $('edit-result').className = 'ok';
    loadGroups();
  } catch (e) {
    $('edit-result').textContent = 'nothing sent';
    $('edit-result').className = 'error';
    const vs = (e.data && e.data.violations) || [];
    if (vs.length === 0) errs.append(el('li', {}, e.message));
    for (const v of vs) errs.append(el('li', { class: 'violation' }, el('code', {}, v.location), ': ', v.message));
  }
}

// --- jobs ----------------------------------------------------------------

async function loadJobs() {
  const data = await api('GET', '/api/jobs');
  const running = data.jobs.filter((j) => j.state === 'running').length;
  $('jobs-badge').textContent = running ? '(' + running + ' running)' : '';
  const body = clear($('jobs-table').tBodies[0]);
  for (const j of data.jobs) {
    // Selected runs ahead of moved by one batch at most (a replay
    // publishes what it selected in batches, then counts them moved).
    const pct = j.expected ? Math.min(100, 100 * Math.max(j.moved, j.selected) / j.expected) : 0;
    const bar = el('div', { class: 'progress' }, el('div', {}));
    bar.firstChild.style.width = (j.state === 'done' ? 100 : pct) + '%';
    body.append(el('tr', { 'data-job': j.id, 'data-state': j.state },
      el('td', {}, j.id), el('td', {}, j.kind + ' of ' + j.what), el('td', {}, j.target), el('td', {}, j.who),
      el('td', {}, bar, el('div', { class: 'muted' }, j.state + ': looked at ' + j.looked + ', selected ' + j.selected + ', moved ' + j.moved + ' of ' + j.expected +
        ' (' + j.rate.toFixed(1) + ' msg/s, ' + j.elapsed_s.toFixed(1) + ' s)')),
      el('td', { class: 'result' }, j.result || '', j.error ? el('div', { class: 'error' }, j.error) : null,
        ...(j.failures || []).map((f) => el('div', { class: 'muted' }, f))),
      el('td', {}, j.state === 'running' ? el('button', { class: 'act cancel', onclick: () => api('POST', '/api/jobs/' + j.id + '/cancel').then(loadJobs) }, 'Cancel') : null)));
  }
  if (!data.jobs.length) body.append(el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'none yet')));
  renderGroupsActions();
}

// --- audit ---------------------------------------------------------------

async function loadAudit() {
  const data = await api('GET', '/api/audit');
  $('audit-file').textContent = data.file ? '(' + data.file + ')' : '(not kept in a file)';
  $('audit-error').textContent = data.error ? 'the audit file could not be written: ' + data.error : '';
  const body = clear($('audit-table').tBodies[0]);
  for (const a of data.entries) {
    body.append(el('tr', { class: 'audit-' + a.action }, el('td', {}, a.at), el('td', {}, a.who), el('td', {}, a.action), el('td', {}, a.what || ''),
      el('td', { class: 'num' }, a.count || ''), el('td', {}, a.result || '', a.error ? el('div', { class: 'error' }, a.error) : null)));
  }
}

// --- topology ------------------------------------------------------------

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

async function loadTopology() {
  let v;
  try { v = await api('GET', '/api/topology'); $('topo-error').textContent = ''; }
  catch (e) { $('topo-error').textContent = e.message; return; }
  $('topo-at').textContent = 'as of ' + v.at + ', refreshed every 5 s';
  const cols = { exchange: [], queue: [], dead: [] };
  for (const x of v.exchanges) cols.exchange.push({ id: 'x:' + x.name, lines: [x.name, x.kind], cls: x.missing ? 'missing' : '' });
  for (const q of v.queues) {
    const lines = [q.name, 'depth ' + q.depth + ' · consumers ' + q.consumers, 'oldest ' + (q.oldest || '-'), q.missing ? 'MISSING' : (q.draining ? 'draining: ' : 'NOT DRAINING: ') + q.verdict];
    const cls = q.missing ? 'missing' : (q.role !== 'queue' && q.depth > 0 ? 'failed' : (!q.draining ? 'stuck' : ''));
    (q.role === 'queue' ? cols.queue : cols.dead).push({ id: 'q:' + q.name, lines, cls, q });
  }
  const W = 300, H = 74, GAP = 14, X = [60, 430, 810];
  const pos = {};
  let height = 0;
  [cols.exchange, cols.queue, cols.dead].forEach((col, i) => col.forEach((n, j) => {
    pos[n.id] = { x: X[i], y: 10 + j * (H + GAP) };
    height = Math.max(height, 10 + (j + 1) * (H + GAP));
  }));
  const pic = svg('svg', { width: X[2] + W + 10, height, id: 'topo-svg', role: 'img' });
  const edges = svg('g', {});
  for (const b of v.bindings) {
    if (b.to_exchange) {
      // Exchange to exchange (the delay topology): a curve on the left.
      const a = pos['x:' + b.exchange], z = pos['x:' + b.to_exchange];
      if (a && z) edges.append(svg('path', { class: 'edge', d: 'M' + a.x + ',' + (a.y + H / 2) + ' C' + (a.x - 45) + ',' + (a.y + H / 2) + ' ' + (z.x - 45) + ',' + (z.y + H / 2) + ' ' + z.x + ',' + (z.y + H / 2) },
        svg('title', {}, b.exchange + ' → ' + b.to_exchange + ' (' + b.routing_key + ')')));
      continue;
    }
    const from = pos['x:' + b.exchange], to = pos['q:' + b.queue];
    if (!from || !to) continue;
    const dead = b.exchange === 'acemq.dlx' || b.exchange === 'acemq.retry';
    edges.append(svg('path', { class: 'edge' + (dead ? ' dead' : ''), d: 'M' + (from.x + W) + ',' + (from.y + H / 2) + ' C' + (from.x + W + 40) + ',' + (from.y + H / 2) + ' ' + (to.x - 40) + ',' + (to.y + H / 2) + ' ' + to.x + ',' + (to.y + H / 2) },
      svg('title', {}, b.exchange + ' → ' + b.queue + ' (' + b.routing_key + ')')));
  }
  for (const n of cols.dead) {
    const from = pos['q:' + n.q.owner], to = pos[n.id];
    if (from) edges.append(svg('path', { class: 'edge dead', d: 'M' + (from.x + W) + ',' + (from.y + H / 2) + ' L' + to.x + ',' + (to.y + H / 2) }));
  }
  pic.append(edges);
  for (const col of [cols.exchange, cols.queue, cols.dead]) {
    for (const n of col) {
      const p = pos[n.id];
      const g = svg('g', { class: 'node ' + n.cls, 'data-name': n.lines[0], transform: 'translate(' + p.x + ',' + p.y + ')' });
      g.append(svg('rect', { width: W, height: H, rx: 4 }));
      n.lines.forEach((l, i) => g.append(svg('text', { x: 8, y: 16 + i * 16, 'font-weight': i === 0 ? 600 : 400 }, l)));
      pic.append(g);
    }
  }
  clear($('topo-picture')).append(pic);
  const diffs = clear($('topo-diffs'));
  for (const d of v.differences || []) diffs.append(el('li', {}, d));
  if (!(v.differences || []).length) diffs.append(el('li', { class: 'ok' }, 'the broker matches the manifest'));
}

// --- wiring --------------------------------------------------------------

async function tick() {
  try {
    if (tab === 'failed') await loadGroups();
    if (tab === 'jobs' || tab === 'failed') await loadJobs();
    if (tab === 'audit') await loadAudit();
  } catch (e) {
    $('pass-text').textContent = 'the console does not answer: ' + e.message;
  }
  const running = lastPass && lastPass.running;
  setTimeout(tick, running || tab === 'jobs' ? 500 : 2000);
}

function topoTick() {
  if (tab === 'topology') loadTopology();
  setTimeout(topoTick, 5000);
}

document.addEventListener('DOMContentLoaded', async () => {
  for (const t of document.querySelectorAll('.tab')) t.addEventListener('click', () => show(t.dataset.tab));
  $('by').addEventListener('change', () => { state.by = $('by').value; state.group = null; $('list').classList.add('hidden'); loadGroups(); });
  for (const id of ['f-queue', 'f-type', 'f-origin', 'f-q']) $(id).addEventListener('change', () => loadGroups());
  $('rescan').addEventListener('click', async () => { await api('POST', '/api/rescan'); loadGroups(); });
  $('search-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const q = $('search').value.trim();
    if (!q) return;
    state.search = q; state.offset = 0; state.selected.clear();
    const f = filters();
    try { await api('POST', '/api/search', { query: q, filter: f }); loadList(); }
    catch (e) { alertBox(e.message); }
  });
  $('list-prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - 50); loadList(); });
  $('list-next').addEventListener('click', () => { if (state.offset + 50 < state.total) { state.offset += 50; loadList(); } });
  $('sel-all').addEventListener('change', (ev) => {
    for (const m of state.list) { const id = m.source + '/' + m.key; if (ev.target.checked) state.selected.set(id, m); else state.selected.delete(id); }
    loadList();
  });
  $('sel-dry').addEventListener('click', () => dryRun(selection()));
  $('sel-replay').addEventListener('click', () => replay(selection(), state.selected.size, 'the selection'));
  $('sel-discard').addEventListener('click', () => discard(selection(), state.selected.size, 'the selection'));
  $('message-close').addEventListener('click', () => $('message').classList.add('hidden'));
  $('message-replay').addEventListener('click', () => replay({ messages: [{ source: current.source, pos: current.pos, key: current.key }] }, 1, 'message ' + (current.id || '')));
  $('message-discard').addEventListener('click', () => discard({ messages: [{ source: current.source, pos: current.pos, key: current.key }] }, 1, 'message ' + (current.id || '')));
  $('message-edit').addEventListener('click', startEdit);
  $('edit-send').addEventListener('click', sendEdit);
  const first = location.hash.slice(1);
  show(document.querySelector('.tab[data-tab="' + (['failed', 'jobs', 'audit', 'topology'].includes(first) ? first : 'failed') + '"]').dataset.tab);
  await loadSession();
  tick();
  topoTick();
});
