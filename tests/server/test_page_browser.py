#!/usr/bin/env python3
"""The built-in page in a real browser (suite 'browser'): headless Chromium
loads / from a daemon on a generated road graph and on one without
coordinates, and what the page wrote into its DOM and painted on its canvas
(with ?from=&to=&iso= at load, and after two clicks on the map) is checked
against the daemon's own answers.

    test_page_browser.py SSSPD SSSPD-GEN

The browser is $SS_BROWSER, or the first of chromium, chromium-browser,
google-chrome, google-chrome-stable on the PATH; with none the test is
skipped (exit 77). Debian: apt-get install chromium."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

SKIP = 77
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def browser():
    named = os.environ.get("SS_BROWSER")
    if named:
        return shutil.which(named)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, ssspd, args, tmp):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(tmp, f"ssspd-{self.port}.log"), "w+")
        self.proc = subprocess.Popen(
            [ssspd, *args, "--listen", f"127.0.0.1:{self.port}", "--workers", "2"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        self.log.seek(0)
        sys.exit(f"the daemon did not start:\n{self.log.read()}")

    def get(self, path):
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def json(self, path):
        status, body = self.get(path)
        return status, json.loads(body)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def chromium(exe, tmp, url, *extra):
    """Runs the browser on url until the page's requests settle; returns its
    stdout. Virtual time lets the page's fetches finish before the dump."""
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking",
           f"--user-data-dir={os.path.join(tmp, 'profile')}",
           "--window-size=1000,800", "--virtual-time-budget=20000", *extra, url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(r.stderr[-3000:])
    return r.stdout


class Devtools:
    """Chromium driven over --remote-debugging-pipe (fd 3 in, fd 4 out;
    JSON messages ending in NUL), for what a URL cannot do: clicks."""

    def __init__(self, exe, tmp):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():  # in the child: the pipe ends at 3 and 4, kept across exec
            r, w = os.dup(to_r), os.dup(from_w)  # out of the way of 3 and 4 first
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", f"--user-data-dir={os.path.join(tmp, 'profile-cdp')}",
             "--window-size=1000,800", "--remote-debugging-pipe", "about:blank"],
            close_fds=False, preexec_fn=fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.next, self.buf, self.session = 0, b"", None

    def call(self, method, **params):
        self.next += 1
        msg = {"id": self.next, "method": method, "params": params}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                chunk = os.read(self.from_r, 65536)
                if not chunk:
                    raise RuntimeError("the browser closed its pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url):
        target = self.call("Target.createTarget", url=url)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        return r["result"].get("value")

    def wait(self, expr, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            v = self.eval(expr)
            if v:
                return v
            time.sleep(0.1)
        return None

    def click(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)


def lines(dom):
    """The page's status lines, by element id, as text."""
    out = {}
    for m in re.finditer(r'<p id="(\w+)"[^>]*>(.*?)</p>', dom, re.S):
        out[m.group(1)] = m.group(2).replace("&amp;", "&").strip()
    return out


def png_pixels(path):
    """The RGB(A) rows of a non-interlaced 8-bit PNG, as the browser writes
    its screenshots: (width, height, bytes per pixel, list of rows)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat = 8, b""
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        chunk = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + n
    raw = zlib.decompress(idat)
    rows, prev, stride = [], bytearray(w * bpp), w * bpp
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def colours(path):
    """Counts of the drawing's colours in a screenshot: road grey (#9aa4ad
    over white, any strength), route blue (#1565c0), isochrone orange
    (#e67e22)."""
    w, h, bpp, rows = png_pixels(path)
    n = {"road": 0, "route": 0, "iso": 0}
    for row in rows:
        for x in range(w):
            r, g, b = row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]
            if abs(r - 21) < 20 and abs(g - 101) < 20 and abs(b - 192) < 20:
                n["route"] += 1
            elif abs(r - 230) < 20 and abs(g - 126) < 20 and abs(b - 34) < 20:
                n["iso"] += 1
            elif r < 235 and b - r > 8 and abs((255 - r) * 82 - (255 - b) * 101) < 40 * (255 - r):
                n["road"] += 1
    return n


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ssspd, gen = sys.argv[1:]
    exe = browser()
    if not exe:
        print("no browser (chromium, chromium-browser, google-chrome; or SS_BROWSER): skipped")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="ssspd-browser-")
    try:
        road = os.path.join(tmp, "road")
        subprocess.run([gen, "road", "--nodes", "3000", "--seed", "7", "--out", road],
                       check=True, capture_output=True)
        d = Daemon(ssspd, ["--graph", road + ".gr", "--coords", road + ".co"], tmp)
        try:
            run_with_coordinates(exe, tmp, d)
        finally:
            d.stop()
        data = os.environ.get("SS_DATA_DIR", "tests/data")
        d = Daemon(ssspd, ["--graph", os.path.join(data, "dimacs/samples/sample.gr")], tmp)
        try:
            run_without_coordinates(exe, tmp, d)
        finally:
            d.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(failures)} failures" if failures else "all checks passed")
    return 1 if failures else 0


def run_with_coordinates(exe, tmp, d):
    _, m = d.json("/map")
    _, route = d.json("/route?from=1&to=2900")
    _, iso = d.json("/isochrone?from=1&max=4000")
    want = {
        "map": f"map: {m['nodes']} nodes, {len(m['roads']) // 2} roads drawn",
        "route": f"route: {len(route['nodes'])} nodes, distance {route['distance']}",
        "iso": f"isochrone: {iso['count']} nodes within 4000 of 1",
    }
    url = d.base + "/?from=1&to=2900&iso=4000"
    dom = chromium(exe, tmp, url, "--dump-dom")
    check('data-ready="yes"' in dom, "the page finished its work at load")
    got = lines(dom)
    for key, text in want.items():
        check(got.get(key) == text, f"#{key}: got {got.get(key)!r}, want {text!r}")

    # What it painted: the roads, the route over them, the isochrone's hull.
    shot = os.path.join(tmp, "page.png")
    chromium(exe, tmp, url, f"--screenshot={shot}")
    check(os.path.exists(shot), "a screenshot was taken")
    if os.path.exists(shot):
        n = colours(shot)
        print("painted pixels:", n)
        check(n["road"] > 5000, f"the roads are drawn ({n['road']} grey pixels)")
        check(n["route"] > 200, f"the route is drawn ({n['route']} blue pixels)")
        check(n["iso"] > 20, f"the isochrone is drawn ({n['iso']} orange pixels)")

    run_clicks(exe, tmp, d)

    # A bad id: the daemon's own message, on the line of the query.
    _, bad = d.json("/route?from=1&to=999999")
    dom = chromium(exe, tmp, d.base + "/?from=1&to=999999", "--dump-dom")
    got = lines(dom)
    want_bad = f"route: {bad['code']}: {bad['message']}"
    check(got.get("route") == want_bad, f"#route: got {got.get('route')!r}, want {want_bad!r}")


def run_clicks(exe, tmp, d):
    """Two clicks on two nodes' places: the page snaps each to its node
    (/nearest) and draws the route between them, as the daemon answers it."""
    a, b = 5, 2500
    _, route = d.json(f"/route?from={a}&to={b}")
    want = f"route: {len(route['nodes'])} nodes, distance {route['distance']}"
    cdp = Devtools(exe, tmp)
    try:
        cdp.open(d.base + "/")
        check(cdp.wait("document.body.dataset.ready === 'yes'") is not None, "clicks: page ready")
        # Where node id sits on the screen, in CSS pixels, by the page's
        # own projection (the map holds every node here: step 1).
        where = ("(id => { const r = canvas.getBoundingClientRect(), p = state.map.lonlat_e6;"
                 " return [r.left + view.px(p[2 * (id - 1)]) / view.ratio,"
                 " r.top + view.py(p[2 * (id - 1) + 1]) / view.ratio]; })")
        for i, node in enumerate((a, b)):
            x, y = cdp.eval(f"{where}({node})")
            cdp.click(x, y)
            field = "from" if i == 0 else "to"
            got = cdp.wait(f"document.getElementById('{field}').value === '{node}'")
            check(got is not None, f"clicks: the click on node {node} picked it as {field}")
        got = cdp.wait("(t => t.startsWith('route: ') && !t.includes('asking') && t)"
                       "(document.getElementById('route').textContent)")
        print("after two clicks:", got)
        check(got == want, f"clicks: #route: got {got!r}, want {want!r}")
    finally:
        cdp.close()


def run_without_coordinates(exe, tmp, d):
    # Nothing to draw, and the page says why; routes by id still work.
    _, m = d.json("/map")
    _, route = d.json("/route?from=1&to=6")
    dom = chromium(exe, tmp, d.base + "/?from=1&to=6&iso=3", "--dump-dom")
    got = lines(dom)
    want = {
        "map": f"map: {m['code']}: {m['message']}",
        "route": f"route: {len(route['nodes'])} nodes, distance {route['distance']}",
    }
    for key, text in want.items():
        check(got.get(key) == text, f"no coordinates, #{key}: got {got.get(key)!r}, want {text!r}")
    check(got.get("iso", "").startswith("isochrone: ") and "nodes within 3 of 1" in got["iso"],
          f"no coordinates, #iso: {got.get('iso')!r}")


if __name__ == "__main__":
    sys.exit(main())
