#!/usr/bin/env python3
"""scripts/console_browser.py — owns the browser check of trawl's live console.

Drives the console page in headless Chromium through chromedriver, speaking W3C WebDriver
over HTTP with the standard library only (offline, no extra packages): loads the page (with
the token in the URL fragment, as trawl prints it), waits until the rendered page count
moves, with --search QUERY types QUERY in the search box until hits show (the crawl indexes
as its WARC files close), presses Pause, waits until the page shows the crawl paused, and
saves a screenshot.
Prints what it saw as JSON; exits non-zero when a step fails.

Usage: console_browser.py --url http://127.0.0.1:PORT/#token=T --screenshot OUT.png
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    def __init__(self, base):
        self.base = base
        self.session = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as res:
            return json.loads(res.read() or b"{}").get("value")

    def s(self, path):
        return f"/session/{self.session}{path}"

    def find(self, css):
        found = self.call("POST", self.s("/element"), {"using": "css selector", "value": css})
        return found[ELEMENT]

    def text(self, css):
        return self.call("GET", self.s(f"/element/{self.find(css)}/text"))

    def click(self, css):
        self.call("POST", self.s(f"/element/{self.find(css)}/click"), {})


def wait(what, cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def number(text):
    digits = "".join(c for c in text if c.isdigit())
    return int(digits) if digits else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--screenshot", required=True)
    ap.add_argument("--search")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--chromedriver", default=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    args = ap.parse_args()
    for tool in (args.chromium, args.chromedriver):
        if not os.path.exists(tool):
            raise SystemExit(f"{tool} not found: scripts/test installs chromium and chromium-driver")

    port = free_port()
    profile = tempfile.mkdtemp(prefix="trawl-chromium-")
    driver_proc = subprocess.Popen([args.chromedriver, f"--port={port}"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = Driver(f"http://127.0.0.1:{port}")
    seen = {}
    try:
        wait("chromedriver", lambda: _ready(d))
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": args.chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1500",
                         f"--user-data-dir={profile}", "--no-first-run",
                         "--disable-background-networking", "--disable-component-update"],
            },
        }}}
        d.session = d.call("POST", "/session", caps)["sessionId"]
        d.call("POST", d.s("/url"), {"url": args.url})
        seen["title"] = d.call("GET", d.s("/title"))
        first = wait("a page count on the page", lambda: number(d.text("#pages")))
        seen["pages_first"] = first
        seen["pages_later"] = wait("the page count to move",
                                   lambda: (n := number(d.text("#pages"))) and n > first and n)
        seen["state_before"] = d.text("#state")
        if args.search:
            seen["search_shown"] = wait("the search box", lambda: d.call(
                "POST", d.s("/execute/sync"),
                {"script": "return !document.getElementById('search-panel').hidden", "args": []}))
            seen["search"] = wait("hits in the search box", lambda: _search(d, args.search))

        seen["token_from_fragment"] = bool(d.call(
            "POST", d.s("/execute/sync"),
            {"script": "return document.getElementById('token').value", "args": []}))
        d.click("#pause")
        seen["state_after"] = wait("the page to show the crawl paused",
                                   lambda: d.text("#state") == "paused" and "paused")
        seen["message"] = d.text("#message")
        time.sleep(1.2)  # one more poll, so the screenshot shows settled numbers
        png = base64.b64decode(d.call("GET", d.s("/screenshot")))
        with open(args.screenshot, "wb") as f:
            f.write(png)
        seen["screenshot_bytes"] = len(png)
    finally:
        if d.session:
            try:
                d.call("DELETE", d.s(""))
            except Exception:
                pass
        driver_proc.terminate()
        try:
            driver_proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            driver_proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(seen))


def _search(d, query):
    """Types the query, submits it, and returns what the hits list shows (None when empty)."""
    box = d.find("#search-query")
    d.call("POST", d.s(f"/element/{box}/clear"), {})
    d.call("POST", d.s(f"/element/{box}/value"), {"text": query})
    d.click("#search-form button")
    time.sleep(0.5)
    return d.call("POST", d.s("/execute/sync"), {"script": """
        const hits = document.querySelectorAll('#search-hits li');
        if (!hits.length) return null;
        return {hits: hits.length,
                summary: document.getElementById('search-summary').textContent,
                first: hits[0].textContent,
                marked: Array.from(hits[0].querySelectorAll('mark')).map(m => m.textContent)};
    """, "args": []})


def _ready(d):
    try:
        return d.call("GET", "/status").get("ready")
    except Exception:
        return False


if __name__ == "__main__":
    sys.exit(main())
