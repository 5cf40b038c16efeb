#!/usr/bin/env python3
"""Drives the web page of `ogp master` in real headless Chromium and checks it against
the master's own JSON API.

    target/interop/venv/bin/python crates/ogp-master/tests/browser/page_test.py \
        --base http://127.0.0.1:PORT --screenshots DIR

Needs only the base URL of a running master with some servers in its list (one of them
named with `<script>` in it, for the hostile-text check); discovers everything else
through GET /api/v1/servers. Chromium, chromedriver and selenium come from
scripts/install-browser.sh. Prints one line per check and exits non-zero at the first
failure, saying what differed.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_S = 20
# What the page shows instead of control characters (C0, DEL, C1, bidi overrides and
# isolates): the same rule as clean() in app.js.
CONTROL = re.compile("[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")


class CheckFailed(Exception):
    pass


def shown(text):
    return CONTROL.sub("\ufffd", str(text))


def fail(msg):
    raise CheckFailed(msg)


def ok(msg):
    print(f"ok   {msg}", flush=True)


# ---- the API, read directly (not through the browser) -----------------------------------

class Api:
    def __init__(self, base):
        self.base = base.rstrip("/")

    def get(self, path):
        url = self.base + path
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                return json.load(r)
        except urllib.error.HTTPError as e:
            fail(f"GET {path}: HTTP {e.code}")
        except (urllib.error.URLError, OSError) as e:
            fail(f"GET {path}: {e}")

    def servers(self):
        """Every item of GET /api/v1/servers?limit=1000, following `next`."""
        out, cursor, pages = [], None, 0
        while True:
            path = "/api/v1/servers?limit=1000"
            if cursor is not None:
                path += "&cursor=" + urllib.parse.quote(str(cursor), safe="")
            page = self.get(path)
            out.extend(page.get("servers") or [])
            cursor = page.get("next")
            pages += 1
            if cursor in (None, "") or pages > 10000:
                return out

    def server(self, addr):
        return self.get("/api/v1/servers/" + urllib.parse.quote(addr, safe=""))


def row_name(item):
    name = item.get("name")
    return shown(name) if name not in (None, "") else item["addr"]


# ---- the browser ------------------------------------------------------------------------

def make_driver(profile_dir):
    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile_dir}", "--window-size=1280,900", "--lang=en-US",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver's path is given, so selenium-manager never runs (the network is closed).
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_window_size(1280, 900)
    driver.set_page_load_timeout(30)
    return driver


class Page:
    def __init__(self, driver, base):
        self.d = driver
        self.base = base.rstrip("/")

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def wait(self, cond, what, timeout=WAIT_S):
        try:
            return WebDriverWait(self.d, timeout, poll_frequency=0.1).until(lambda _: cond())
        except TimeoutException:
            fail(f"timed out after {timeout} s waiting for {what}")

    def load(self, path_and_query="/"):
        self.d.get(self.base + path_and_query)
        self.wait(lambda: self.js("return document.getElementById('main').dataset.loaded === '1'"),
                  f"the server list of {path_and_query} to load")

    def rows(self):
        """The rows of the current page: addr, name, game, mod and players as shown."""
        return self.js("""
            return Array.from(document.querySelectorAll('#rows tr[data-addr]')).map((tr) => ({
              addr: tr.dataset.addr,
              name: tr.querySelector('.name').textContent,
              game: tr.querySelector('.c-game').firstChild.textContent,
              mod: tr.querySelector('.c-game .mod')?.textContent ?? null,
              players: tr.querySelector('.c-players .pc').textContent,
            }));""")

    def page_info(self):
        return self.js("return document.getElementById('page-info').textContent")

    def all_rows(self):
        """The rows of every page, from the first, clicking "Next"."""
        if self.js("return !document.getElementById('page-first').disabled"):
            before = self.page_info()
            self.d.find_element(By.ID, "page-first").click()
            self.wait(lambda: self.page_info() != before, "the first page")
        out = []
        for _ in range(100000):
            out.extend(self.rows())
            if self.js("return document.getElementById('page-next').disabled || document.getElementById('pager').hidden"):
                return out
            before = self.page_info()
            self.d.find_element(By.ID, "page-next").click()
            self.wait(lambda: self.page_info() != before, "the next page")
        fail("the pager never reaches a last page")

    def shown_total(self):
        return self.js("return document.getElementById('count').dataset.total")

    def sort_by(self, key):
        header = self.d.find_element(By.CSS_SELECTOR, f'#servers thead th[data-key="{key}"]')
        before = header.get_attribute("aria-sort")
        header.find_element(By.TAG_NAME, "button").click()
        self.wait(lambda: header.get_attribute("aria-sort") != before, f"aria-sort of {key} to change")
        return header.get_attribute("aria-sort")

    def no_pwn(self, where):
        if self.js("return typeof window.__pwned") != "undefined":
            fail(f"{where}: window.__pwned is set: server text was run as script")

    def press_on(self, element, key):
        self.js("arguments[0].focus()", element)
        ActionChains(self.d).send_keys(key).perform()


def players_int(text):
    digits = re.sub(r"[^\d-]", "", text.replace("\u2212", "-"))
    if not re.fullmatch(r"-?\d+", digits):
        fail(f"player count {text!r} is not a number")
    return int(digits)


# ---- the checks ---------------------------------------------------------------------------

def compare_rows(rows, items, what):
    by_addr = {}
    for r in rows:
        if r["addr"] in by_addr:
            fail(f"{what}: {r['addr']} is listed twice")
        by_addr[r["addr"]] = r
    want = {i["addr"]: i for i in items}
    missing = sorted(set(want) - set(by_addr))
    extra = sorted(set(by_addr) - set(want))
    if missing or extra:
        return f"{what}: addresses differ: missing {missing[:5]} ({len(missing)}), extra {extra[:5]} ({len(extra)})"
    for addr, item in want.items():
        r = by_addr[addr]
        if r["name"] != row_name(item):
            return f"{what}: {addr}: name shown {r['name']!r}, API has {row_name(item)!r}"
        game = shown(item["game"]) if item.get("game") else "\u2014"
        mod = item.get("mod") or None
        mod = shown(mod) if mod and mod.lower() != (item.get("game") or "").lower() else None
        if (r["game"], r["mod"]) != (game, mod):
            return f"{what}: {addr}: game shown {r['game']!r} (mod {r['mod']!r}), API has {game!r} (mod {mod!r})"
        if players_int(r["players"]) != item["players"]:
            return f"{what}: {addr}: players shown {r['players']!r}, API has {item['players']}"
    return None


def check_list(page, api):
    items = api.servers()
    if not items:
        fail("check 1: the API lists no server; the page test needs some")
    page.load("/?per=500")
    want = expect_rows(page, api, lambda its: its, "check 1")
    ok(f"check 1: the list shows the API's {len(want)} servers (addresses, names, player counts)")
    return want


def monotonic(values, direction, what):
    for a, b in zip(values, values[1:]):
        if (direction == "ascending" and a > b) or (direction == "descending" and a < b):
            fail(f"{what}: order broken at {a!r} then {b!r}")


def names_in_order(page, names, direction, what):
    bad = page.js("""
        const [names, dir] = arguments;
        const c = new Intl.Collator(undefined, {sensitivity: 'base', numeric: true});
        for (let i = 1; i < names.length; i++) {
          const d = c.compare(names[i - 1], names[i]);
          if (dir === 'ascending' ? d > 0 : d < 0) return [names[i - 1], names[i]];
        }
        return null;""", names, direction)
    if bad:
        fail(f"{what}: {bad[0]!r} comes before {bad[1]!r}")


def check_catalogue(page, api, items):
    """A server the games catalogue identifies is shown under the catalogue's name (not
    the name its status gives), and the game filter selects it by that name."""
    named = [i for i in items if i.get("game_id")]
    if not named:
        fail("catalogue: no server of the API is identified by the games catalogue")
    page.load("/?per=500")
    rows = {r["addr"]: r for r in page.rows()}
    for i in named:
        r = rows.get(i["addr"])
        if r is None or r["game"] != shown(i["game"]):
            fail(f"catalogue: {i['addr']}: shown {r and r['game']!r}, catalogue name {i['game']!r}")
        status_name = (i.get("status") or {}).get("game_name")
        if status_name == i["game"]:
            fail(f"catalogue: {i['addr']}: the API's game is the status's own name {status_name!r}")
    game = named[0]["game"]
    Select(page.d.find_element(By.ID, "f-game")).select_by_value(game)
    want = expect_rows(page, api, lambda its: [i for i in its if i.get("game") == game],
                       "catalogue: game filter")
    if not want:
        fail(f"catalogue: filtering by {game!r} shows nothing")
    ok(f"catalogue: {len(named)} server(s) shown as {sorted({i['game'] for i in named})} "
       f"(ids {sorted({i['game_id'] for i in named})}), and the game filter selects them")


def check_sorting(page, api, items):
    page.load("/")
    counts = [i["players"] for i in items]
    first = {"ascending": min(counts), "descending": max(counts)}
    for n in (1, 2):
        direction = page.sort_by("players")
        if direction not in ("ascending", "descending"):
            fail(f"check 2: aria-sort of Players is {direction!r} after a click")
        rows = page.rows()
        values = [players_int(r["players"]) for r in rows]
        monotonic(values, direction, f"check 2: players {direction}")
        if values and values[0] != first[direction]:
            # The master's data may have changed since it was read: read it again once,
            # after the page's next refresh.
            time.sleep(11)
            counts = [i["players"] for i in api.servers()]
            first = {"ascending": min(counts), "descending": max(counts)}
            values = [players_int(r["players"]) for r in page.rows()]
            monotonic(values, direction, f"check 2: players {direction}")
        if values and values[0] != first[direction]:
            fail(f"check 2: players {direction}: first row has {values[0]}, the API's extreme is {first[direction]}")
        others = page.js("""return Array.from(document.querySelectorAll('#servers thead th'))
            .filter((th) => th.dataset.key !== 'players').map((th) => th.getAttribute('aria-sort'))""")
        if any(o != "none" for o in others):
            fail(f"check 2: other columns' aria-sort are {others}, want all 'none'")
        if n == 1:
            prev = direction
        elif direction == prev:
            fail("check 2: a second click on Players did not reverse the order")
    ok("check 2: sorting by players, both directions (aria-sort, first row = API's min/max)")
    raw = {i["addr"]: i.get("name") for i in items}  # the page sorts unnamed servers last
    for n in (1, 2):
        direction = page.sort_by("name")
        if n == 1 and direction != "ascending":
            fail(f"check 2: the first click on Name sorts {direction!r}, want 'ascending'")
        if n == 2 and direction != "descending":
            fail(f"check 2: the second click on Name sorts {direction!r}, want 'descending'")
        rows = page.all_rows() if len(items) <= 1000 else page.rows()
        names = [raw.get(r["addr"]) for r in rows]
        names_in_order(page, [n for n in names if n is not None], direction, f"check 2: names {direction}")
    ok("check 2: sorting by name, A→Z then Z→A on a second click")


def search_term(items):
    """A word from the names that matches some servers but not all (about a quarter)."""
    total = len(items)
    lower = [(i.get("name") or "").lower() for i in items]
    words = set()
    for i in items[:3000]:
        words.update(w for w in re.findall(r"[^\W\d_]{3,}", i.get("name") or ""))
    best = None
    for w in sorted(words):
        n = sum(1 for s in lower if w.lower() in s)
        if 0 < n < total:
            score = abs(n - max(1, total // 4))
            if best is None or score < best[0]:
                best = (score, w, n)
    if best is None:
        fail("check 3: no word in the server names matches some servers but not all")
    return best[1]


def expect_rows(page, api, select, what, attempts=3):
    """Waits until the page lists exactly select(API's servers), over all its pages. When
    the master's data changes meanwhile, reads both again after the page's next refresh."""
    problem = None
    for n in range(attempts):
        want = select(api.servers())
        try:
            page.wait(lambda: page.shown_total() == str(len(want)), f"{len(want)} rows ({what})", timeout=12)
        except CheckFailed as e:
            problem = str(e)
        else:
            problem = compare_rows(page.all_rows(), want, what)
        if problem is None:
            return want
        if n + 1 < attempts:
            time.sleep(11)
    fail(problem)


def check_filters(page, api, items):
    page.load("/?per=500")
    term = search_term(items)
    typed = term.swapcase() if term.swapcase() != term else term.upper()
    box = page.d.find_element(By.ID, "f-q")
    box.clear()
    box.send_keys(typed)
    named = lambda its: [i for i in its if term.lower() in (i.get("name") or "").lower()]  # noqa: E731
    want = expect_rows(page, api, named, f"check 3: search {typed!r}")
    ok(f"check 3: searching {typed!r} (any case) shows exactly the {len(want)} servers whose name contains it")

    page.d.find_element(By.ID, "f-notempty").click()
    want = expect_rows(page, api, lambda its: [i for i in named(its) if i["players"] > 0], "check 3: search + not empty")
    ok(f"check 3: 'not empty' hides the servers with 0 players ({len(want)} left)")

    url = page.d.current_url
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    if query.get("q") != [typed] or query.get("notempty") != ["1"]:
        fail(f"check 3: the URL does not carry the filters: {url}")
    page.d.get("about:blank")
    page.d.get(url)
    page.wait(lambda: page.js("return document.getElementById('main').dataset.loaded === '1'"), "the shared URL to load")
    if box_value(page) != typed or not page.d.find_element(By.ID, "f-notempty").is_selected():
        fail(f"check 3: loading {url} did not restore the search box and 'not empty'")
    expect_rows(page, api, lambda its: [i for i in named(its) if i["players"] > 0], "check 3: the shared URL")
    ok(f"check 3: the filters are in the URL ({urllib.parse.urlsplit(url).query}) and loading it restores them")

    page.load("/?notempty=1&per=500")
    want = expect_rows(page, api, lambda its: [i for i in its if i["players"] > 0], "check 3: not empty alone")
    ok(f"check 3: 'not empty' alone shows the {len(want)} servers with players")

    games = {}
    for i in items:
        if i.get("game"):
            games[i["game"]] = games.get(i["game"], 0) + 1
    if games:
        game = max(sorted(games), key=lambda g: games[g])
        Select(page.d.find_element(By.ID, "f-game")).select_by_value(game)
        page.d.find_element(By.ID, "f-notempty").click()  # off again
        page.d.find_element(By.ID, "f-notfull").click()
        page.d.find_element(By.ID, "f-nopass").click()

        def full(i):
            return isinstance(i.get("max_players"), int) and i["max_players"] > 0 and i["players"] >= i["max_players"]
        want = expect_rows(page, api, lambda its: [i for i in its if i.get("game") == game and not full(i)
                                                   and i.get("password") is not True], "check 3: game, not full, no password")
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.d.current_url).query)
        if query.get("game") != [game] or query.get("notfull") != ["1"] or query.get("nopass") != ["1"] or "notempty" in query:
            fail(f"check 3: the URL does not carry game, not full and no password: {page.d.current_url}")
        ok(f"check 3: game {game!r} + 'not full' + 'no password' show exactly the {len(want)} such servers")


def box_value(page):
    return page.d.find_element(By.ID, "f-q").get_attribute("value")


def open_details(page, addr):
    row = page.wait(lambda: page.js(
        "return Array.from(document.querySelectorAll('#rows tr')).find((tr) => tr.dataset.addr === arguments[0]) || null", addr),
        f"the row of {addr}")
    page.press_on(row, Keys.ENTER)
    page.wait(lambda: page.js(
        "const v = document.getElementById('details-view'); return !v.hidden && v.dataset.loaded === arguments[0]", addr),
        f"the details of {addr} after Enter on its row")


def check_players_shown(page, detail, what):
    players = (detail.get("status") or {}).get("players") or []
    shown_rows = page.js("""
        return Array.from(document.querySelectorAll('#d-players tbody tr')).map((tr) => {
          const c = (k) => { const td = tr.querySelector(`td[data-key="${k}"]`); return td ? td.textContent : null; };
          return [c('name'), c('score')];
        });""")
    want = sorted((shown(p.get("name", "")), p.get("score")) for p in players)
    got = []
    for name, score in shown_rows:
        got.append((name, None if score in (None, "") else players_int(score)))
    got.sort(key=lambda x: (x[0], x[1] is None, x[1] or 0))
    want.sort(key=lambda x: (x[0], x[1] is None, x[1] or 0))
    if got != want:
        fail(f"{what}: players shown {got[:8]} ≠ API {want[:8]}")
    return len(players)


def check_details(page, api, items, shots):
    top = max(items, key=lambda i: i["players"])
    page.load("/")
    while page.js("return document.querySelector('#servers th[data-key=\"players\"]').getAttribute('aria-sort')") != "descending":
        page.sort_by("players")
    first = page.rows()[0]
    if players_int(first["players"]) != top["players"]:
        fail(f"check 4: the first row by players has {first['players']}, the API's most is {top['players']}")
    addr = first["addr"]
    detail = api.server(addr)
    open_details(page, addr)
    if not page.js("return location.hash.startsWith('#/server/')"):
        fail("check 4: the details view has no #/server/ URL")
    title = page.js("return document.getElementById('d-title').textContent")
    if title != row_name(detail):
        fail(f"check 4: details title {title!r}, API name {row_name(detail)!r}")
    n = check_players_shown(page, detail, "check 4")
    ok(f"check 4: details of {addr} show its {n} players with their scores")
    # A players table wider than its card scrolls inside it, and a shadow on the right
    # edge says that there is more (the card's background: a cover that scrolls with the
    # content over a shadow that stays). Scrolled to the end, the cover hides it.
    wide = page.js("""const w = document.querySelector('#d-players').closest('.table-wrap');
        const s = getComputedStyle(w);
        return { over: w.scrollWidth > w.clientWidth, image: s.backgroundImage,
                 attach: s.backgroundAttachment, overflow: s.overflowX }""")
    if wide["overflow"] not in ("auto", "scroll"):
        fail(f"check 4: the players table's card does not scroll (overflow-x {wide['overflow']})")
    if wide["over"]:
        if wide["image"].count("radial-gradient") != 2 or "local" not in wide["attach"] or "scroll" not in wide["attach"]:
            fail(f"check 4: the players table is clipped with no scroll hint ({wide['image']!r}, {wide['attach']!r})")
        ok("check 4: the players table is wider than its card: it scrolls, with a shadow on the edge that has more")
    else:
        ok("check 4: the players table fits its card")
    # Team colours (OGP: 16-bit 5-6-5 RGB) as swatches with their hex code.
    teams = [t for t in ((detail.get("status") or {}).get("teams") or []) if isinstance(t.get("color"), int)]
    if teams:
        want = []
        for t in teams:
            v = t["color"]
            rgb = (round(((v >> 11) & 31) * 255 / 31), round(((v >> 5) & 63) * 255 / 63), round((v & 31) * 255 / 31))
            want.append("#%02x%02x%02x" % rgb)
        got = page.js("""return [...document.querySelectorAll('#d-teams td[data-key="color"] .color')]
            .map((c) => [c.dataset.rgb, getComputedStyle(c.querySelector('.swatch')).backgroundColor])""")
        if [g[0] for g in got] != want:
            fail(f"check 4: team colours shown {got}, from the API's 5-6-5 values {want}")
        for (hexcode, css) in got:
            r, g, b = (int(hexcode[i:i + 2], 16) for i in (1, 3, 5))
            if css != f"rgb({r}, {g}, {b})":
                fail(f"check 4: the swatch of {hexcode} is painted {css}")
        ok(f"check 4: team colours as swatches: {', '.join(want)}")
    # Fields the server does not know come over OGP as "", 0 and a zero MD5 (one
    # field mask covers both maps); the page leaves those rows out.
    next_map = (detail.get("status") or {}).get("next_map") or {}
    if next_map:
        shown = page.js("""return [...document.querySelectorAll('#s-next_map .kv-row')].map((r) => r.dataset.key)""")
        fillers = [k for k, v in next_map.items()
                   if v == "" or (k in ("file_size", "size") and v == 0)
                   or (k.endswith("md5") and isinstance(v, str) and set(v) == {"0"})]
        want = [k for k in next_map if k not in fillers]
        if shown != want:
            fail(f"check 4: next map rows {shown}, want {want} (left out: {fillers})")
        ok(f"check 4: next map shows {', '.join(want)}; {len(fillers)} empty fields left out")
    # Keys are shown as words; the ones read as letters in capitals ("os" is OS, "file_md5"
    # File MD5, "global_id" Global ID), and every other word as the key has it.
    labels = page.js("""return [...document.querySelectorAll('#details-view .kv-row[data-key]')]
        .map((r) => [r.dataset.key, r.querySelector('dt').textContent])""")
    letters = {"os", "url", "md5", "id", "ip"}
    for key, label in labels:
        want = " ".join(w.upper() if w in letters else w for w in key.split("_") if w)
        want = want[:1].upper() + want[1:]
        # (rows the page names itself, such as "up" shown as Status, are not words of the key)
        if label.lower() == want.lower() and label != want:
            fail(f"check 4: the details label of {key!r} is {label!r}, want {want!r}")
    ok(f"check 4: {len(labels)} detail labels, acronyms in capitals "
       f"({', '.join(sorted({l for k, l in labels if set(k.split('_')) & letters})) or 'none here'})")
    history = detail.get("history") or []
    if len(history) >= 2:
        points = page.js("""const l = document.querySelector('#details-view svg#history-chart polyline.line');
            return l ? l.getAttribute('points').trim().split(/\\s+/).length : null""")
        # The master keeps polling: the page may have loaded a poll more (or fewer, if
        # it loaded first) than the API read before it. The API read after the chart
        # bounds it from above.
        later = len((api.server(addr) or {}).get("history") or [])
        if points is None or not len(history) <= points <= later:
            fail(f"check 4: the chart has {points} points, the API's history has "
                 f"{len(history)} entries before and {later} after")
        ok(f"check 4: the SVG chart has one point per history entry ({points})")
    else:
        if not page.js("return !!document.getElementById('history-chart-empty')"):
            fail(f"check 4: history has {len(history)} entries and the page says nothing about it")
        ok(f"check 4: history has {len(history)} entries: no chart, a note instead")
    conn = page.js("return document.getElementById('d-connect').value")
    if not conn or not page.d.find_element(By.ID, "d-copy").is_displayed():
        fail("check 4: no connect address with a copy button")
    full_screenshot(page, os.path.join(shots, "details.png"))
    dark(page, True)
    full_screenshot(page, os.path.join(shots, "details-dark.png"))
    dark(page, False)

    ActionChains(page.d).send_keys(Keys.ESCAPE).perform()
    page.wait(lambda: page.js("return document.getElementById('details-view').hidden && !document.getElementById('list-view').hidden"),
              "Escape to close the details")
    if page.js("return location.hash") not in ("", "#"):
        fail("check 4: Escape left the #/server/ URL")
    if page.js("return document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.addr : null") != addr:
        fail("check 4: after Escape the focus is not back on the server's row")
    ok("check 4: Escape closes the details and gives the focus back to the row")


def is_minecraft(item):
    """The crafted Minecraft server of check 5b: its name (or, as the API gives a
    Minecraft server's name plain, its protocol) says so."""
    return "\u00a7" in (item.get("name") or "") or "minecraft" in (item.get("protocols") or [])


def check_hostile(page, api, items, shots):
    hostile = [i for i in items if "<script>" in (i.get("name") or "") and not is_minecraft(i)]
    if not hostile:
        fail("check 5: no server whose name contains '<script>' is listed: the hostile-text check needs one")
    item = hostile[0]
    addr = item["addr"]
    page.load("/?q=" + urllib.parse.quote("<script>", safe=""))
    if box_value(page) != "<script>":
        fail(f"check 5: the search box shows {box_value(page)!r} for ?q=%3Cscript%3E")
    rows = {r["addr"]: r for r in page.all_rows()}
    if addr not in rows:
        fail(f"check 5: {addr} is not listed for the search '<script>'")
    if rows[addr]["name"] != shown(item["name"]):
        fail(f"check 5: row text {rows[addr]['name']!r}, want {shown(item['name'])!r}")
    page.no_pwn("check 5, list")
    imgs = page.js("return document.querySelectorAll('#list-view img, #servers img').length")
    if imgs:
        fail(f"check 5: {imgs} img element(s) inside the list")
    scripts = page.js("return document.querySelectorAll('#main script').length")
    if scripts:
        fail(f"check 5: {scripts} script element(s) inside the page's content")
    ok(f"check 5: the hostile name of {addr} is literal text in its row, no img, window.__pwned unset")

    detail = api.server(addr)
    open_details(page, addr)
    title = page.js("return document.getElementById('d-title').textContent")
    if title != shown(detail["name"]):
        fail(f"check 5: details title {title!r}, want {shown(detail['name'])!r}")
    page.no_pwn("check 5, details")
    imgs = page.js("return document.querySelectorAll('#details-view img, #main script').length")
    if imgs:
        fail(f"check 5: {imgs} img/script element(s) in the details")
    check_players_shown(page, detail, "check 5")
    full_screenshot(page, os.path.join(shots, "details-hostile.png"))
    time.sleep(0.5)
    page.no_pwn("check 5, details")
    ok("check 5: the details show the hostile name and players as literal text, window.__pwned unset")


MC_CODE = re.compile("\u00a7.?", re.S)


def check_minecraft(page, api, items, shots):
    """A server whose status has a `favicon` rule (a PNG data URL) and a name with `§`
    codes and markup: the details show the image (decoded, src exactly the rule) and the
    name formatted as text; the list shows the name as literal text."""
    crafted = [i for i in items if is_minecraft(i)]
    if not crafted:
        fail("check 5b: no Minecraft server (or name with a \u00a7 code) is listed: the favicon check needs one")
    item = crafted[0]
    addr = item["addr"]
    detail = api.server(addr)
    favicon = (detail.get("status") or {}).get("rules", {}).get("favicon")
    if not (isinstance(favicon, str) and favicon.startswith("data:image/png;base64,")):
        fail(f"check 5b: {addr} has no favicon rule in the API: {favicon!r}")
    page.load("/")
    rows = {r["addr"]: r for r in page.all_rows()}
    if addr not in rows or rows[addr]["name"] != shown(item["name"]):
        fail(f"check 5b: the row of {addr} is {rows.get(addr)!r}, want the name {shown(item['name'])!r} as text")
    open_details(page, addr)
    img = page.wait(lambda: page.js(
        "const i = document.querySelector('#d-title img#d-favicon'); return i && i.complete ? i : null"),
        f"check 5b: the favicon of {addr} in the details")
    src, width = page.js("return [arguments[0].getAttribute('src'), arguments[0].naturalWidth]", img)
    if src != favicon:
        fail(f"check 5b: the favicon's src is {src[:60]!r}…, want the rule's data URL")
    if width != 1:
        fail(f"check 5b: the favicon did not decode (naturalWidth {width}, want 1)")
    imgs = page.js("return document.querySelectorAll('#details-view img').length")
    if imgs != 1:
        fail(f"check 5b: {imgs} img elements in the details, want only the favicon")
    motd = page.js("return document.getElementById('d-motd').textContent")
    want = shown(MC_CODE.sub("", detail.get("status", {}).get("host_name_raw") or detail["name"]))
    if motd != want:
        fail(f"check 5b: the MOTD shows {motd!r}, want {want!r}")
    green = page.js("return Array.from(document.querySelectorAll('#d-motd span.mc-a')).map((s) => s.textContent).join('')")
    if not green.startswith("Green"):
        fail(f"check 5b: no green span for \u00a7a (got {green!r})")
    bold = page.js("return Array.from(document.querySelectorAll('#d-motd span.mc-l')).map((s) => s.textContent).join('')")
    if bold != "Bold":
        fail(f"check 5b: the \u00a7l span says {bold!r}, want 'Bold'")
    colour = page.js("return getComputedStyle(document.querySelector('#d-motd span.mc-a')).color")
    if colour != "rgb(85, 255, 85)":
        fail(f"check 5b: the \u00a7a span is {colour}, want rgb(85, 255, 85)")
    markup = page.js("return document.querySelectorAll('#d-title script, #d-title b, #main script').length")
    if markup:
        fail(f"check 5b: {markup} element(s) made from the MOTD's markup")
    page.no_pwn("check 5b, details")
    full_screenshot(page, os.path.join(shots, "details-favicon.png"))
    ok(f"check 5b: {addr} shows its favicon (decoded, src = the rule) and its \u00a7-formatted MOTD as text, no markup, window.__pwned unset")


def full_screenshot(page, path, max_height=6000):
    """The whole page, beyond the window's height (capped), through CDP."""
    import base64
    m = page.d.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = m.get("cssContentSize") or m["contentSize"]
    width = int(min(size["width"], 4000))
    height = int(min(size["height"], max_height))
    shot = page.d.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
    })
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


def dark(page, on):
    features = [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})
    want = "true" if on else "false"
    page.wait(lambda: str(page.js("return matchMedia('(prefers-color-scheme: dark)').matches")).lower() == want,
              "the emulated color scheme")


def check_screenshots(page, shots):
    page.load("/")
    page.d.save_screenshot(os.path.join(shots, "list.png"))
    dark(page, True)
    page.d.save_screenshot(os.path.join(shots, "list-dark.png"))
    dark(page, False)
    page.d.set_window_size(412, 900)
    # On a phone the game column is hidden and each row names its game under the server's
    # name instead; on a wide screen only the column does.
    phone = page.js("""const r = document.querySelector('#servers tbody tr');
        const g = r && r.querySelector('.game-inline'), c = r && r.querySelector('td.c-game');
        return r ? { inline: g ? [g.textContent, getComputedStyle(g).display] : null,
                     column: getComputedStyle(c).display, game: c.firstChild ? c.firstChild.textContent : null } : null""")
    if not phone or not phone["inline"] or phone["inline"][1] == "none" or phone["column"] != "none" \
            or phone["inline"][0] != phone["game"]:
        fail(f"check 6: on a phone the first row should show its game under its name, not in a column: {phone}")
    page.d.save_screenshot(os.path.join(shots, "list-phone.png"))
    page.d.set_window_size(1280, 900)
    if page.js("const g = document.querySelector('#servers tbody .game-inline'); return g ? getComputedStyle(g).display : 'none'") != "none":
        fail("check 6: on a wide screen the game shows twice (its column and under the name)")
    for f in ("list.png", "list-dark.png", "list-phone.png", "details.png", "details-dark.png"):
        p = os.path.join(shots, f)
        if not os.path.isfile(p) or os.path.getsize(p) < 1000:
            fail(f"check 6: screenshot {p} is missing or empty")
    ok(f"check 6: screenshots list.png, list-dark.png, list-phone.png, details.png, details-dark.png in {shots}")


def check_live_refresh(page):
    """The page re-reads the API on its own (every ~10 s) without reloading itself."""
    page.load("/")
    page.js("window.__still_same_page = 1")
    start = int(page.js("return parseInt(document.getElementById('main').dataset.refreshes || '0', 10)"))
    page.wait(lambda: int(page.js("return parseInt(document.getElementById('main').dataset.refreshes || '0', 10)")) > start,
              "a live refresh of the list (every ~10 s)", timeout=25)
    if page.js("return window.__still_same_page") != 1:
        fail("check 7: the page reloaded itself to refresh")
    if page.js("return document.getElementById('refresh-status').classList.contains('error')"):
        fail("check 7: the refresh failed: " + page.js("return document.getElementById('refresh-status').textContent"))
    ok("check 7: the list refreshes itself in place (no page reload, no error)")


def check_console(page):
    errors = [e for e in page.d.get_log("browser") if e.get("level") == "SEVERE"]
    if errors:
        fail("browser console errors (a CSP violation shows here too): " + "; ".join(e["message"] for e in errors[:5]))
    ok("no error in the browser console (no CSP violation, no failed request)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the master's HTTP base URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("--screenshots", required=True, help="directory for the PNG screenshots")
    a = ap.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    # a failure screenshot is of this run's failure, never an earlier run's
    try:
        os.remove(os.path.join(a.screenshots, "failure.png"))
    except FileNotFoundError:
        pass
    api = Api(a.base)
    profile = tempfile.mkdtemp(prefix="ogp-page-test-")
    driver = None
    try:
        driver = make_driver(profile)
        page = Page(driver, a.base)
        items = check_list(page, api)
        check_catalogue(page, api, items)
        check_sorting(page, api, items)
        check_filters(page, api, items)
        check_details(page, api, items, a.screenshots)
        check_hostile(page, api, items, a.screenshots)
        check_minecraft(page, api, items, a.screenshots)
        check_screenshots(page, a.screenshots)
        check_live_refresh(page)
        check_console(page)
    except CheckFailed as e:
        print(f"FAIL {e}", flush=True)
        if driver is not None:
            try:
                driver.save_screenshot(os.path.join(a.screenshots, "failure.png"))
                print(f"     (screenshot of the failure: {os.path.join(a.screenshots, 'failure.png')})")
            except Exception:  # noqa: BLE001 - best effort
                pass
        return 1
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("page test: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
