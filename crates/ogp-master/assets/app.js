// The server browser of `ogp master`: plain ES2020, no framework, no build step.
//
// Security rule of this file: every piece of text that comes from a game server (names,
// maps, rules, players...) reaches the page through `document.createTextNode` (via `el`
// / `txt`) after `clean()`, never through innerHTML or an attribute that is interpreted
// (href, src, on*). The page runs under `Content-Security-Policy: default-src 'self';
// img-src 'self' data:; style-src 'self'`: no inline script, no eval, no style attribute.
'use strict';

(() => {
  const API = '/api/v1';
  const REFRESH_MS = 10000;
  const PER_PAGE_CHOICES = [50, 100, 250, 500];
  const DEFAULT_SORT = { key: 'players', dir: 'desc' };
  // The natural first direction of each column: numbers people want high first
  // (players) or low first (ping), text A to Z.
  const FIRST_DIR = { name: 'asc', game: 'asc', map: 'asc', players: 'desc', ping: 'asc', protocols: 'asc', password: 'asc' };

  // ---- text and DOM helpers ---------------------------------------------------------

  // C0, DEL, C1 controls and the bidi embeddings/overrides/isolates become U+FFFD, so a
  // server name can neither break the layout nor reorder the text around it.
  const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
  const clean = (v) => String(v).replace(CONTROL, '\ufffd');

  const txt = (v) => document.createTextNode(clean(v));

  // el('td', {class: 'x', 'data-key': 'name'}, 'text', childNode, ...)
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') node.className = v;
        // Attribute values are never parsed as markup; those read out or shown as a
        // tooltip are cleaned like text, the others (option values, data-*) stay exact.
        else node.setAttribute(k, v === true ? '' : k === 'title' || k.startsWith('aria-') ? clean(v) : String(v));
      }
    }
    append(node, children);
    return node;
  }
  function append(node, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(node, c);
      else node.appendChild(c instanceof Node ? c : txt(c));
    }
    return node;
  }
  const SVG_NS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    append(node, children);
    return node;
  }
  const $ = (id) => document.getElementById(id);

  const nf = new Intl.NumberFormat();
  const fmtInt = (n) => nf.format(n);
  const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });

  function fmtPing(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
    return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
  }
  function fmtDuration(s) {
    if (!Number.isFinite(s)) return String(s);
    s = Math.max(0, Math.round(s));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const pad = (x) => String(x).padStart(2, '0');
    return h ? `${h}:${pad(m)}:${pad(sec)}` : `${m}:${pad(sec)}`;
  }
  function fmtBytes(n) {
    if (!Number.isFinite(n)) return String(n);
    const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = n, i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return i === 0 ? `${fmtInt(n)} bytes` : `${v.toFixed(1)} ${units[i]} (${fmtInt(n)} bytes)`;
  }
  function fmtTime(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return String(iso);
    return new Date(t).toLocaleString();
  }
  function fmtAgo(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return '';
    const s = Math.round((Date.now() - t) / 1000);
    if (s < 0) return 'just now';
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    return `${Math.round(s / 86400)} d ago`;
  }
  // Words that are read as letters keep their capitals: "os" is OS, "file_md5" File MD5.
  const ACRONYMS = new Set(['os', 'url', 'md5', 'id', 'ip', 'ipv4', 'ipv6', 'ttl', 'fps', 'pb', 'dns', 'api', 'http', 'tcp', 'udp']);
  function humanize(key) {
    const words = String(key).split('_').filter((w) => w !== '');
    const s = words.map((w) => (ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase() : w)).join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1);
  }
  const isScalar = (v) => v === null || typeof v !== 'object';
  function fmtScalar(key, v) {
    if (v === null || v === undefined) return '—';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'number') {
      if (/(^|_)size$/.test(key)) return fmtBytes(v);
      if (key === 'time') return fmtDuration(v);
      if (/(^|_)(id|port|color|colour|slot|md5|version)$/.test(key)) return String(v);
      return fmtInt(v);
    }
    return String(v);
  }

  // ---- fetching with ETag ------------------------------------------------------------

  const etags = new Map(); // url -> {etag, data}
  class HttpError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }
  // Resolves to {data, changed}. A 304 answer to our If-None-Match gives the cached data.
  async function getJSON(url) {
    const cached = etags.get(url);
    const headers = { Accept: 'application/json' };
    if (cached) headers['If-None-Match'] = cached.etag;
    const r = await fetch(url, { headers, cache: 'no-store', credentials: 'same-origin' });
    if (r.status === 304 && cached) return { data: cached.data, changed: false };
    if (!r.ok) {
      let msg = `HTTP ${r.status}`;
      try { const j = await r.json(); if (j && j.error) msg = `${msg}: ${j.error}`; } catch (_) { /* not JSON */ }
      throw new HttpError(r.status, msg);
    }
    const data = await r.json();
    const etag = r.headers.get('ETag');
    if (etag) etags.set(url, { etag, data });
    else etags.delete(url);
    return { data, changed: true };
  }

  // ---- state -------------------------------------------------------------------------

  const state = {
    servers: [],        // all items (summary view)
    filtered: [],       // after filters and sort
    loaded: false,
    q: '', game: '', map: '', notempty: false, notfull: false, nopass: false,
    sort: { ...DEFAULT_SORT },
    page: 1, per: 100,
    detailsAddr: null,  // the address shown in the details view, or null
    openedFromList: false,
    lastFocusAddr: null,
  };

  function readQuery() {
    const p = new URLSearchParams(location.search);
    state.q = p.get('q') || '';
    state.game = p.get('game') || '';
    state.map = p.get('map') || '';
    state.notempty = p.get('notempty') === '1';
    state.notfull = p.get('notfull') === '1';
    state.nopass = p.get('nopass') === '1';
    const sort = p.get('sort');
    if (sort && sort in FIRST_DIR) {
      state.sort = { key: sort, dir: p.get('dir') === 'asc' ? 'asc' : p.get('dir') === 'desc' ? 'desc' : FIRST_DIR[sort] };
    } else {
      state.sort = { ...DEFAULT_SORT };
    }
    const per = parseInt(p.get('per') || '', 10);
    state.per = PER_PAGE_CHOICES.includes(per) ? per : 100;
    const page = parseInt(p.get('page') || '', 10);
    state.page = Number.isFinite(page) && page > 0 ? page : 1;
  }

  function writeQuery() {
    const p = new URLSearchParams();
    if (state.q) p.set('q', state.q);
    if (state.game) p.set('game', state.game);
    if (state.map) p.set('map', state.map);
    if (state.notempty) p.set('notempty', '1');
    if (state.notfull) p.set('notfull', '1');
    if (state.nopass) p.set('nopass', '1');
    if (state.sort.key !== DEFAULT_SORT.key || state.sort.dir !== DEFAULT_SORT.dir) {
      p.set('sort', state.sort.key);
      p.set('dir', state.sort.dir);
    }
    if (state.per !== 100) p.set('per', String(state.per));
    if (state.page > 1) p.set('page', String(state.page));
    const qs = p.toString();
    const url = location.pathname + (qs ? `?${qs}` : '') + location.hash;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(history.state, '', url);
  }

  function syncControls() {
    $('f-q').value = state.q;
    ensureOption($('f-game'), state.game);
    $('f-game').value = state.game;
    ensureOption($('f-map'), state.map);
    $('f-map').value = state.map;
    $('f-notempty').checked = state.notempty;
    $('f-notfull').checked = state.notfull;
    $('f-nopass').checked = state.nopass;
    $('f-per').value = String(state.per);
  }
  function ensureOption(select, value) {
    if (!value) return;
    for (const o of select.options) if (o.value === value) return;
    select.appendChild(el('option', { value }, value));
  }

  // ---- the list ----------------------------------------------------------------------

  function isFull(s) { return Number.isFinite(s.max_players) && s.max_players > 0 && s.players >= s.max_players; }

  function applyFilters() {
    const q = state.q.toLowerCase();
    const out = state.servers.filter((s) =>
      (!q || String(s.name ?? '').toLowerCase().includes(q)) &&
      (!state.game || (s.game ?? '') === state.game) &&
      (!state.map || (s.map ?? '') === state.map) &&
      (!state.notempty || s.players > 0) &&
      (!state.notfull || !isFull(s)) &&
      (!state.nopass || s.password !== true));
    const { key, dir } = state.sort;
    const sign = dir === 'asc' ? 1 : -1;
    const val = (s) => {
      switch (key) {
        case 'players': return s.players;
        case 'ping': return s.ping_ms;
        case 'protocols': return (s.protocols || []).join(',');
        case 'password': return s.password === null || s.password === undefined ? null : s.password ? 1 : 0;
        default: return s[key];
      }
    };
    out.sort((a, b) => {
      const va = val(a), vb = val(b);
      const na = va === null || va === undefined, nb = vb === null || vb === undefined;
      let c = 0;
      if (na || nb) c = na && nb ? 0 : na ? 1 : -1; // unknown values last, in both directions
      else {
        c = typeof va === 'number' && typeof vb === 'number' ? va - vb : collator.compare(String(va), String(vb));
        c *= sign;
      }
      return c || collator.compare(a.addr, b.addr);
    });
    state.filtered = out;
  }

  function pageCount() { return Math.max(1, Math.ceil(state.filtered.length / state.per)); }

  function renderHeaders() {
    for (const th of document.querySelectorAll('#servers thead th')) {
      const k = th.dataset.key;
      th.setAttribute('aria-sort', k === state.sort.key ? (state.sort.dir === 'asc' ? 'ascending' : 'descending') : 'none');
    }
  }

  function protoBadges(list) {
    return (list || []).map((p) => el('span', { class: `badge proto proto-${String(p).replace(/[^a-z0-9-]/gi, '')}` }, p));
  }

  // The mod that runs, under the game's name when it says something more ("ctfplus" under
  // "Demo Arena"; not "cstrike" under "cstrike").
  function modNote(s) {
    const m = s.mod;
    if (typeof m !== 'string' || m === '' || m.toLowerCase() === String(s.game ?? '').toLowerCase()) return null;
    return el('span', { class: 'mod', title: 'Mod' }, m);
  }

  function renderRow(s) {
    const down = s.up === false;
    const name = s.name === null || s.name === undefined || s.name === '' ? s.addr : s.name;
    const tr = el('tr', {
      tabindex: '0', class: down ? 'down' : null,
      'data-addr': s.addr, 'data-players': String(s.players),
    });
    const full = isFull(s);
    tr.append(
      el('td', { class: 'c-name' },
        el('span', { class: 'name', title: name }, name),
        el('span', { class: 'addr' }, s.addr, down ? el('span', { class: 'badge down-badge' }, 'down') : null,
          s.password === true ? el('span', { class: 'badge lock lock-inline', 'aria-hidden': 'true' }, 'locked') : null),
        // the game under the name where the game column does not fit (phones)
        s.game ? el('span', { class: 'game-inline', 'aria-hidden': 'true' }, s.game) : null),
      el('td', { class: 'c-game' }, s.game ?? '—', modNote(s)),
      el('td', { class: 'c-map' }, s.map ?? '—'),
      el('td', { class: `c-players num${s.players > 0 ? ' has' : ''}${full ? ' full' : ''}` },
        el('span', { class: 'pc' }, fmtInt(s.players)),
        Number.isFinite(s.max_players) ? el('span', { class: 'max' }, ` / ${fmtInt(s.max_players)}`) : null,
        Number.isFinite(s.bots) && s.bots > 0 ? el('span', { class: 'bots' }, ` +${fmtInt(s.bots)} bot${s.bots === 1 ? '' : 's'}`) : null),
      el('td', { class: 'c-ping num' }, down ? 'down' : fmtPing(s.ping_ms)),
      el('td', { class: 'c-proto' }, protoBadges(s.protocols)),
      el('td', { class: 'c-pass' }, s.password === true
        ? el('span', { class: 'badge lock', title: 'Password required' }, 'locked')
        : s.password === false ? el('span', { class: 'sr-only' }, 'open') : el('span', { class: 'muted' }, '?')),
    );
    return tr;
  }

  function renderList() {
    applyFilters();
    const pages = pageCount();
    if (state.loaded && state.page > pages) state.page = pages; // before loading, keep ?page=
    renderHeaders();
    const start = (state.page - 1) * state.per;
    const slice = state.filtered.slice(start, start + state.per);
    const tbody = $('rows');
    const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#rows tr');
    const focusAddr = focused ? focused.dataset.addr : null;
    const frag = document.createDocumentFragment();
    for (const s of slice) frag.appendChild(renderRow(s));
    tbody.replaceChildren(frag);
    if (focusAddr) {
      const again = rowFor(focusAddr);
      if (again) again.focus({ preventScroll: true });
    }
    $('empty').hidden = !(state.loaded && slice.length === 0);
    const total = state.servers.length, n = state.filtered.length;
    const count = $('count');
    count.dataset.total = String(n);
    count.textContent = !state.loaded ? 'Loading servers…'
      : n === 0 ? `No server of ${fmtInt(total)} matches.`
        : `Showing ${fmtInt(start + 1)}–${fmtInt(start + slice.length)} of ${fmtInt(n)} server${n === 1 ? '' : 's'}` +
          (n !== total ? ` (filtered from ${fmtInt(total)})` : '');
    $('page-info').textContent = `Page ${fmtInt(state.page)} of ${fmtInt(pages)}`;
    $('page-first').disabled = $('page-prev').disabled = state.page <= 1;
    $('page-next').disabled = $('page-last').disabled = state.page >= pages;
    $('pager').hidden = pages <= 1 && state.per === 100;
    if (state.loaded) writeQuery();
  }

  function rowFor(addr) {
    for (const tr of $('rows').children) if (tr.dataset.addr === addr) return tr;
    return null;
  }

  function fillSelect(select, values, allLabel) {
    const current = select.value;
    const opts = [el('option', { value: '' }, allLabel)];
    for (const v of values) opts.push(el('option', { value: v }, v));
    select.replaceChildren(...opts);
    ensureOption(select, current);
    select.value = current;
  }

  function refreshFilterOptions() {
    const games = new Map(), maps = new Map();
    for (const s of state.servers) {
      if (s.game) games.set(s.game, (games.get(s.game) || 0) + 1);
      if (s.map && (!state.game || s.game === state.game)) maps.set(s.map, (maps.get(s.map) || 0) + 1);
    }
    const sorted = (m) => [...m.keys()].sort(collator.compare);
    const gameSel = $('f-game'), mapSel = $('f-map');
    const key = (m) => sorted(m).join('\u0000');
    if (gameSel.dataset.values !== key(games)) { fillSelect(gameSel, sorted(games), 'All games'); gameSel.dataset.values = key(games); }
    if (mapSel.dataset.values !== key(maps)) { fillSelect(mapSel, sorted(maps), 'All maps'); mapSel.dataset.values = key(maps); }
    ensureOption(gameSel, state.game); gameSel.value = state.game;
    ensureOption(mapSel, state.map); mapSel.value = state.map;
  }

  // ---- loading and live refresh --------------------------------------------------------

  async function loadServers() {
    let url = `${API}/servers?view=summary&limit=5000`;
    const all = [];
    let changed = false, pages = 0;
    const seen = new Set();
    for (;;) {
      const r = await getJSON(url);
      changed = changed || r.changed;
      pages++;
      for (const s of r.data.servers || []) all.push(s);
      const next = r.data.next;
      if (next === null || next === undefined || next === '' || seen.has(next) || pages > 1000) break;
      seen.add(next);
      url = `${API}/servers?view=summary&limit=5000&cursor=${encodeURIComponent(next)}`;
    }
    if (pages !== state.listPages) changed = true;
    state.listPages = pages;
    return { all, changed };
  }

  async function loadStats() {
    const r = await getJSON(`${API}/stats`);
    const s = r.data || {};
    const stats = $('stats');
    const parts = [
      ['servers', s.servers], ['up', s.up], ['players', s.players],
    ].filter(([, v]) => Number.isFinite(v));
    const kids = [];
    parts.forEach(([label, v], i) => {
      if (i) kids.push(el('span', { class: 'sep', 'aria-hidden': 'true' }, ' · '));
      kids.push(el('span', { class: 'stat', 'data-stat': label }, el('strong', null, fmtInt(v)), ` ${label}`));
    });
    if (s.by_protocol && typeof s.by_protocol === 'object') {
      const bp = Object.entries(s.by_protocol).filter(([, v]) => Number.isFinite(v));
      if (bp.length) {
        kids.push(el('span', { class: 'by-proto' }, bp.map(([k, v]) => el('span', { class: 'badge proto' }, `${k} ${fmtInt(v)}`))));
      }
    }
    if (r.changed || !stats.dataset.filled) { stats.replaceChildren(...kids); stats.dataset.filled = '1'; }
  }

  let refreshTimer = null;
  let refreshing = false;
  function setStatus(text, isError) {
    const st = $('refresh-status');
    st.textContent = text;
    st.classList.toggle('error', !!isError);
  }

  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    try {
      const [list] = await Promise.all([
        loadServers(),
        loadStats().catch((e) => { console.warn('stats:', e); }),
      ]);
      if (list.changed || !state.loaded) {
        state.servers = list.all;
        const first = !state.loaded;
        state.loaded = true;
        refreshFilterOptions();
        renderList();
        $('main').dataset.loaded = '1';
        setStatus(first ? '' : `Updated at ${new Date().toLocaleTimeString()}`);
      } else if ($('refresh-status').classList.contains('error')) {
        setStatus('');
      }
      $('main').dataset.refreshes = String((parseInt($('main').dataset.refreshes || '0', 10)) + 1);
      if (state.detailsAddr) await loadDetails(state.detailsAddr, false);
    } catch (e) {
      setStatus(`Could not refresh: ${e.message}. Retrying…`, true);
    } finally {
      refreshing = false;
      schedule();
    }
  }
  function schedule() {
    clearTimeout(refreshTimer);
    if (document.hidden) return;
    refreshTimer = setTimeout(refresh, REFRESH_MS);
  }

  // ---- details -----------------------------------------------------------------------

  const PLAYER_ORDER = ['name', 'team', 'score', 'frags', 'kills', 'deaths', 'ping', 'time'];

  function connectAddress(item) {
    const port = item.status && Number.isInteger(item.status.connect_port) ? item.status.connect_port : null;
    if (!port) return item.addr;
    const m = /^(.*):(\d+)$/.exec(item.addr);
    return m ? `${m[1]}:${port}` : item.addr;
  }

  async function copyText(text, button) {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch (_) { ok = false; }
    if (!ok) {
      const ta = el('textarea', { readonly: true, class: 'offscreen', 'aria-hidden': 'true' });
      ta.value = text;
      document.body.appendChild(ta);
      ta.select();
      try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
      ta.remove();
    }
    const old = button.dataset.label || button.textContent;
    button.dataset.label = old;
    button.textContent = ok ? 'Copied' : 'Select and copy';
    $('refresh-status').textContent = ok ? `Copied ${text} to the clipboard` : 'Copying failed: select the address and copy it';
    setTimeout(() => { button.textContent = old; }, 1500);
    if (!ok) {
      const input = button.parentElement.querySelector('input');
      if (input) { input.focus(); input.select(); }
    }
  }

  // An OGP team colour (16-bit 5-6-5 RGB, spec 000 §TeamColor): a swatch, its hex code
  // in the tooltip. The colour is set through the CSSOM, which the page's CSP allows.
  function colorSwatch(v) {
    const r = Math.round(((v >> 11) & 31) * 255 / 31);
    const g = Math.round(((v >> 5) & 63) * 255 / 63);
    const b = Math.round((v & 31) * 255 / 31);
    const hex = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
    const sw = el('span', { class: 'swatch' });
    sw.style.backgroundColor = hex;
    return el('span', { class: 'color', role: 'img', title: `${hex} (${v}, 5-6-5 RGB)`, 'aria-label': hex, 'data-rgb': hex }, sw);
  }

  function dl(entries) {
    const d = el('dl', { class: 'kv' });
    for (const [k, v, key] of entries) {
      d.append(el('div', { class: 'kv-row', 'data-key': key || null }, el('dt', null, k), el('dd', null, v)));
    }
    return d;
  }

  function valueNode(key, v) {
    if (isScalar(v)) return fmtScalar(key, v);
    if (Array.isArray(v)) {
      if (v.every(isScalar)) return v.map((x) => fmtScalar(key, x)).join(', ') || '—';
      if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) return objectTable(key, v, null);
      return JSON.stringify(v);
    }
    return dl(Object.entries(v).filter(([k, x]) => !filler(k, x)).map(([k, x]) => [humanize(k), valueNode(k, x), k]));
  }

  // What OGP sends for a field its server does not know: one field mask covers both
  // maps (and the mod), so unknown strings come as "", sizes as 0 and MD5s as zeros.
  // Such rows carry nothing for a player and are left out.
  function filler(key, v) {
    return v === '' || ((key === 'file_size' || key === 'size') && v === 0)
      || (key.endsWith('md5') && typeof v === 'string' && /^0+$/.test(v));
  }

  // A table of objects: one column per key seen, in `order` first, then as they come.
  function objectTable(name, rows, order, cellFn) {
    const cols = [];
    for (const k of order || []) if (rows.some((r) => r && k in r)) cols.push(k);
    for (const r of rows) for (const k of Object.keys(r || {})) if (!cols.includes(k)) cols.push(k);
    const numeric = (k) => rows.every((r) => r[k] === undefined || r[k] === null || typeof r[k] === 'number');
    const table = el('table', { class: `grid t-${name}`, id: `d-${name}` },
      el('thead', null, el('tr', null, cols.map((k) => el('th', { scope: 'col', class: numeric(k) ? 'num' : null }, humanize(k))))),
      el('tbody', null, rows.map((r) => el('tr', null, cols.map((k) => {
        const v = r[k];
        const content = cellFn ? cellFn(k, v, r) : undefined;
        return el('td', { 'data-key': k, class: numeric(k) ? 'num' : null },
          content !== undefined ? content : v === undefined ? '' : valueNode(k, v));
      })))));
    return el('div', { class: 'table-wrap small' }, table);
  }

  function section(title, id, ...body) {
    const hid = `h-${id}`;
    return el('section', { class: 'card', id: `s-${id}`, 'aria-labelledby': hid }, el('h3', { id: hid }, title), ...body);
  }

  function niceMax(v) {
    if (v <= 5) return 5;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function historyChart(history, maxPlayers) {
    const pts = (history || []).filter((h) => h && Number.isFinite(h.players));
    if (pts.length < 2) return el('p', { class: 'muted', id: 'history-chart-empty' }, 'Not enough history yet to draw a chart.');
    const W = 720, H = 240, L = 44, R = 16, T = 14, B = 40;
    let ts = pts.map((h) => Date.parse(h.t));
    const byIndex = ts.some((t) => !Number.isFinite(t)) || ts[ts.length - 1] === ts[0];
    if (byIndex) ts = pts.map((_, i) => i);
    const t0 = ts[0], t1 = ts[ts.length - 1];
    const maxSeen = Math.max(...pts.map((h) => h.players));
    const yMax = niceMax(Math.max(maxSeen, 1));
    const x = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const y = (v) => T + (1 - v / yMax) * (H - T - B);
    const coords = pts.map((h, i) => `${x(ts[i]).toFixed(1)},${y(h.players).toFixed(1)}`);
    const minSeen = Math.min(...pts.map((h) => h.players));
    // Axis labels as precise as the span needs: seconds within ten minutes, the day
    // past one day (history runs for a week).
    const span = t1 - t0;
    const fmt = span < 600e3 ? { hour: '2-digit', minute: '2-digit', second: '2-digit' }
      : span <= 86400e3 ? { hour: '2-digit', minute: '2-digit' }
        : { weekday: 'short', hour: '2-digit', minute: '2-digit' };
    const label = (i) => (byIndex ? `#${i + 1}` : new Date(ts[i]).toLocaleString([], fmt));
    const children = [
      svg('title', { id: 'chart-title' }, `Players over time: ${pts.length} samples, from ${minSeen} to ${maxSeen} players`),
    ];
    for (const v of [0, yMax / 2, yMax]) {
      children.push(svg('line', { class: 'grid-line', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      children.push(svg('text', { class: 'axis-label', x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmtInt(v)));
    }
    if (Number.isFinite(maxPlayers) && maxPlayers > 0 && maxPlayers <= yMax) {
      children.push(svg('line', { class: 'max-line', x1: L, x2: W - R, y1: y(maxPlayers), y2: y(maxPlayers) }));
      children.push(svg('text', { class: 'axis-label max-label', x: W - R, y: y(maxPlayers) - 4, 'text-anchor': 'end' }, `${fmtInt(maxPlayers)} slots`));
    }
    children.push(svg('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    children.push(svg('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
    const xTicks = pts.length > 2 ? [0, Math.floor((pts.length - 1) / 2), pts.length - 1] : [0, pts.length - 1];
    xTicks.forEach((i, n) => {
      const anchor = n === 0 ? 'start' : n === xTicks.length - 1 ? 'end' : 'middle';
      children.push(svg('text', { class: 'axis-label', x: x(ts[i]), y: H - B + 18, 'text-anchor': anchor }, label(i)));
    });
    children.push(svg('text', { class: 'axis-title', x: 12, y: T + (H - T - B) / 2, transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, 'text-anchor': 'middle' }, 'players'));
    const area = `${x(ts[0]).toFixed(1)},${y(0).toFixed(1)} ${coords.join(' ')} ${x(ts[ts.length - 1]).toFixed(1)},${y(0).toFixed(1)}`;
    children.push(svg('polygon', { class: 'area', points: area }));
    children.push(svg('polyline', { class: 'line', points: coords.join(' '), 'data-points': pts.length }));
    if (pts.length <= 96) {
      pts.forEach((h, i) => {
        children.push(svg('circle', { class: 'dot', cx: x(ts[i]).toFixed(1), cy: y(h.players).toFixed(1), r: 3 },
          svg('title', {}, `${byIndex ? label(i) : fmtTime(h.t)}: ${h.players} players`)));
      });
    }
    return svg('svg', { id: 'history-chart', class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'chart-title', preserveAspectRatio: 'xMidYMid meet' }, ...children);
  }

  // ---- Minecraft: the formatted MOTD and the favicon -----------------------------------

  // A name with Minecraft's `§` formatting codes as DOM nodes: text nodes in spans whose
  // classes (mc-0 … mc-f colours, mc-l bold, mc-m strike, mc-n underline, mc-o italic,
  // mc-k obfuscated) come from the codes; never markup. A `§` and the character after it
  // are not shown; lines are separated by <br>.
  const MC_COLOURS = '0123456789abcdef';
  const MC_STYLES = 'klmno';
  function motdNodes(raw) {
    const out = [];
    let colour = null;
    let styles = new Set();
    let run = '';
    const flush = () => {
      if (run === '') return;
      const cls = [colour === null ? null : `mc-${colour}`, ...[...styles].map((c) => `mc-${c}`)].filter(Boolean);
      out.push(cls.length ? el('span', { class: `mc ${cls.join(' ')}` }, run) : txt(run));
      run = '';
    };
    const chars = Array.from(String(raw));
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i];
      if (c === '\u00a7') {
        flush();
        const code = (chars[i + 1] || '').toLowerCase();
        i++;
        if (MC_COLOURS.includes(code) && code !== '') { colour = code; styles = new Set(); }
        else if (MC_STYLES.includes(code) && code !== '') styles.add(code);
        else if (code === 'r') { colour = null; styles = new Set(); }
      } else if (c === '\n') {
        flush();
        out.push(el('br'));
      } else {
        run += c;
      }
    }
    flush();
    return out;
  }

  // A favicon the page shows: a PNG data URL (the `favicon` rule of Minecraft servers),
  // whose prefix and base64 alphabet are checked; set as an img's src only.
  const FAVICON = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;
  const MAX_FAVICON = 65536;
  function faviconOf(st) {
    const f = st && st.rules && typeof st.rules === 'object' ? st.rules.favicon : undefined;
    return typeof f === 'string' && f.length <= MAX_FAVICON && FAVICON.test(f) ? f : null;
  }

  function renderDetails(item) {
    const st = item.status && typeof item.status === 'object' ? item.status : {};
    const name = item.name || st.host_name || item.addr;
    const raw = typeof st.host_name_raw === 'string' && st.host_name_raw !== '' ? st.host_name_raw : name;
    const fav = faviconOf(st);
    const title = [];
    if (fav) {
      const img = el('img', { id: 'd-favicon', class: 'favicon', alt: '', width: '64', height: '64' });
      img.src = fav;
      title.push(img);
    }
    title.push(el('span', { id: 'd-motd', class: 'motd' }, motdNodes(raw)));
    $('d-title').replaceChildren(...title);
    document.title = `${clean(name)} – ogp master`;
    const body = [];

    // Summary card: the master's view of the server and the connect address.
    const conn = connectAddress(item);
    const connInput = el('input', { type: 'text', readonly: true, id: 'd-connect', 'aria-label': 'Connect address', size: '24' });
    connInput.value = conn;
    const copyBtn = el('button', { type: 'button', class: 'btn primary', id: 'd-copy' }, 'Copy');
    copyBtn.addEventListener('click', () => copyText(conn, copyBtn));
    const players = Number.isFinite(item.players) ? item.players : (st.players || []).length;
    body.push(el('div', { class: 'summary card' },
      el('div', { class: 'connect' }, el('label', { for: 'd-connect' }, 'Connect'), connInput, copyBtn),
      dl([
        ['Status', el('span', { class: `badge ${item.up === false ? 'down-badge' : 'up-badge'}` }, item.up === false ? 'down' : 'up'), 'up'],
        ['Players', `${fmtInt(players)}${Number.isFinite(item.max_players) ? ` / ${fmtInt(item.max_players)}` : ''}${Number.isFinite(item.bots) && item.bots ? ` (${fmtInt(item.bots)} bot${item.bots === 1 ? '' : 's'})` : ''}`, 'players'],
        ['Game', el('span', null, item.game ?? st.game_name ?? '—', modNote(item)), 'game'],
        ['Map', item.map ?? (st.map && st.map.name) ?? '—', 'map'],
        ['Ping from the master', fmtPing(item.ping_ms), 'ping_ms'],
        ['Protocols', el('span', null, protoBadges(item.protocols)), 'protocols'],
        ['Password', item.password === true ? 'yes' : item.password === false ? 'no' : 'unknown', 'password'],
        ['Query address', item.addr, 'addr'],
        ['Last seen', item.last_seen ? `${fmtTime(item.last_seen)} (${fmtAgo(item.last_seen)})` : '—', 'last_seen'],
      ])));

    body.push(section('Players over time', 'history', historyChart(item.history, item.max_players)));

    // The status, generically: scalars in one card, then one card per object or list.
    const teams = Array.isArray(st.teams) ? st.teams : [];
    const scalars = Object.entries(st).filter(([, v]) => isScalar(v));
    if (scalars.length) body.push(section('Server', 'server', dl(scalars.map(([k, v]) => [humanize(k), fmtScalar(k, v), k]))));

    const special = ['players', 'teams', 'rules'];
    if (Array.isArray(st.players)) {
      const sortedPlayers = [...st.players].sort((a, b) => (Number(b.score) || 0) - (Number(a.score) || 0));
      body.push(section(`Players (${st.players.length})`, 'players', st.players.length
        ? objectTable('players', sortedPlayers, PLAYER_ORDER, (k, v) => {
          if (k === 'team' && Number.isInteger(v) && teams[v] && teams[v].name !== undefined) return `${clean(teams[v].name)}`;
          if (k === 'time' && typeof v === 'number') return fmtDuration(v);
          if (typeof v === 'boolean') return v ? 'yes' : 'no';
          return undefined;
        })
        : el('p', { class: 'muted' }, 'Nobody is playing.')));
    }
    if (teams.length) {
      body.push(section('Teams', 'teams', objectTable('teams', teams, ['name', 'score', 'player_count'], (k, v) => {
        if (k === 'color' && Number.isInteger(v) && v >= 0 && v <= 0xffff) return colorSwatch(v);
        return undefined;
      })));
    }
    for (const [k, v] of Object.entries(st)) {
      if (isScalar(v) || special.includes(k)) continue;
      if (Array.isArray(v) && v.length === 0) continue;
      body.push(section(humanize(k), k.replace(/[^a-z0-9_-]/gi, ''), valueNode(k, v)));
    }
    if (st.rules && typeof st.rules === 'object' && !Array.isArray(st.rules)) {
      const keys = Object.keys(st.rules).sort(collator.compare);
      body.push(section(`Rules (${keys.length})`, 'rules', keys.length
        ? el('div', { class: 'table-wrap small' }, el('table', { class: 'grid t-rules', id: 'd-rules' },
          el('thead', null, el('tr', null, el('th', { scope: 'col' }, 'Rule'), el('th', { scope: 'col' }, 'Value'))),
          el('tbody', null, keys.map((r) => el('tr', null, el('td', { 'data-key': 'rule' }, r),
            el('td', { 'data-key': 'value' }, r === 'favicon' && typeof st.rules[r] === 'string' && st.rules[r].length > 80
              ? `${st.rules[r].slice(0, 40)}… (${fmtBytes(st.rules[r].length)})`
              : isScalar(st.rules[r]) ? fmtScalar('', st.rules[r]) : JSON.stringify(st.rules[r])))))))
        : el('p', { class: 'muted' }, 'No rules.')));
    }
    if (!item.status) body.push(el('p', { class: 'muted' }, 'The master has no status for this server yet.'));
    $('d-body').replaceChildren(...body);
  }

  let detailsSeq = 0;
  async function loadDetails(addr, first) {
    const seq = ++detailsSeq;
    const view = $('details-view');
    if (first) {
      view.dataset.loaded = '';
      $('d-title').replaceChildren(txt(addr));
      $('d-body').replaceChildren(el('p', { class: 'muted' }, 'Loading…'));
    }
    try {
      const r = await getJSON(`${API}/servers/${encodeURIComponent(addr)}`);
      if (seq !== detailsSeq || state.detailsAddr !== addr) return;
      if (r.changed || first) renderDetails(r.data);
      view.dataset.loaded = addr;
    } catch (e) {
      if (seq !== detailsSeq || state.detailsAddr !== addr) return;
      if (first || e.status === 404) {
        $('d-title').replaceChildren(txt(addr));
        $('d-body').replaceChildren(el('p', { class: 'error', role: 'alert' },
          e.status === 404 ? 'This server is not known to the master (any more).' : `Could not load the server: ${e.message}`));
        view.dataset.loaded = addr;
      } else {
        setStatus(`Could not refresh the server: ${e.message}`, true);
      }
    }
  }

  // ---- routing -----------------------------------------------------------------------

  function hashAddr() {
    const m = /^#\/server\/(.+)$/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (_) { return null; }
  }

  function route() {
    const addr = hashAddr();
    if (addr) {
      const isNew = addr !== state.detailsAddr;
      state.detailsAddr = addr;
      $('list-view').hidden = true;
      $('details-view').hidden = false;
      if (isNew) {
        window.scrollTo(0, 0);
        loadDetails(addr, true);
        $('d-title').focus({ preventScroll: true });
      }
    } else {
      const was = state.detailsAddr;
      state.detailsAddr = null;
      state.openedFromList = false;
      $('details-view').hidden = true;
      $('list-view').hidden = false;
      document.title = 'Game servers – ogp master';
      if (was) {
        const tr = rowFor(was);
        if (tr) tr.focus();
      }
    }
  }

  function openDetails(addr) {
    state.openedFromList = true;
    location.hash = `#/server/${encodeURIComponent(addr)}`;
  }
  function closeDetails() {
    if (state.openedFromList) {
      history.back();
    } else {
      history.pushState(null, '', location.pathname + location.search);
      route();
    }
  }

  // ---- events ------------------------------------------------------------------------

  function onFiltersChanged() {
    state.q = $('f-q').value;
    state.game = $('f-game').value;
    state.map = $('f-map').value;
    state.notempty = $('f-notempty').checked;
    state.notfull = $('f-notfull').checked;
    state.nopass = $('f-nopass').checked;
    state.page = 1;
    refreshFilterOptions();
    renderList();
  }

  function init() {
    readQuery();
    syncControls();
    renderList();

    let debounce = null;
    $('f-q').addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(onFiltersChanged, 120); });
    for (const id of ['f-game', 'f-map', 'f-notempty', 'f-notfull', 'f-nopass']) $(id).addEventListener('change', onFiltersChanged);
    $('filters').addEventListener('submit', (e) => { e.preventDefault(); onFiltersChanged(); });
    $('filters').addEventListener('reset', () => setTimeout(() => {
      $('f-game').value = ''; $('f-map').value = '';
      state.sort = { ...DEFAULT_SORT };
      onFiltersChanged();
    }, 0));
    $('f-per').addEventListener('change', () => {
      state.per = parseInt($('f-per').value, 10) || 100;
      state.page = 1;
      renderList();
    });

    for (const th of document.querySelectorAll('#servers thead th')) {
      th.querySelector('button').addEventListener('click', () => {
        const k = th.dataset.key;
        state.sort = state.sort.key === k
          ? { key: k, dir: state.sort.dir === 'asc' ? 'desc' : 'asc' }
          : { key: k, dir: FIRST_DIR[k] || 'asc' };
        state.page = 1;
        renderList();
      });
    }

    const goPage = (p) => {
      state.page = Math.min(Math.max(1, p), pageCount());
      renderList();
      $('servers').scrollIntoView({ block: 'nearest' });
    };
    $('page-first').addEventListener('click', () => goPage(1));
    $('page-prev').addEventListener('click', () => goPage(state.page - 1));
    $('page-next').addEventListener('click', () => goPage(state.page + 1));
    $('page-last').addEventListener('click', () => goPage(pageCount()));

    const rows = $('rows');
    rows.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-addr]');
      if (tr && !window.getSelection().toString()) openDetails(tr.dataset.addr);
    });
    rows.addEventListener('keydown', (e) => {
      const tr = e.target.closest('tr[data-addr]');
      if (!tr) return;
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); openDetails(tr.dataset.addr); }
      else if (e.key === 'ArrowDown' && tr.nextElementSibling) { e.preventDefault(); tr.nextElementSibling.focus(); }
      else if (e.key === 'ArrowUp' && tr.previousElementSibling) { e.preventDefault(); tr.previousElementSibling.focus(); }
      else if (e.key === 'Home' && rows.firstElementChild) { e.preventDefault(); rows.firstElementChild.focus(); }
      else if (e.key === 'End' && rows.lastElementChild) { e.preventDefault(); rows.lastElementChild.focus(); }
    });

    $('d-back').addEventListener('click', closeDetails);
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && state.detailsAddr) { e.preventDefault(); closeDetails(); }
    });
    window.addEventListener('hashchange', route);
    window.addEventListener('popstate', route);
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) clearTimeout(refreshTimer);
      else refresh();
    });

    route();
    refresh();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
