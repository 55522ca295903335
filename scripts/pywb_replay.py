#!/usr/bin/env python3
"""pywb_replay.py — owns the check that trawl's WARCs replay in pywb.

Usage (with the venv python from scripts/pyenv):
    pywb_replay.py --warcs FILE_OR_DIR... --url URL
                   [--expect FILE] [--expect-status N] [--expect-location URL]
                   [--accept-encoding VALUE] [--keep]

Steps: make a temporary pywb collection (`wb-manager init` + `wb-manager add`
run inside a temp dir), start `wayback -b 127.0.0.1 -p PORT` on a free port,
wait (at most ~30 s) until it answers, fetch

    http://127.0.0.1:PORT/<coll>/id_/<URL>

without following redirects, then compare the answer with what is expected.

How pywb 2.10 answers in id_ mode (no rewriting): with no timestamp in the
URL it serves the latest capture directly (no redirect); the archived
Transfer-Encoding is removed (renamed X-Archive-Orig-Transfer-Encoding), and
a Content-Encoding such as gzip is decoded unless the client sends a
matching Accept-Encoding (urllib sends none; see --accept-encoding). So
--expect is normally the decoded entity, i.e. the page as a browser sees it.
Location headers are passed through unchanged.

Comparisons:
  * the status with --expect-status (default 200, or any 3xx when
    --expect-location is given);
  * the body bytes with the contents of --expect, exactly;
  * with --expect-location, the Location header: accepted when, resolved
    against --url, it is the given URL, or when it ends with the given URL
    (the form pywb's rewriting modes produce:
    http://127.0.0.1:PORT/<coll>/<ts>mp_/<target>).
With a manifest entry's "requisites" ({original URL: expected bytes file}), the page is
also replayed in pywb's rewriting mode (<coll>/mp_/<URL>, as a browser would load it); each
requisite must appear in the rewritten page (img/script src, link href, style url()) as a URL
into the collection, and fetching that rewritten URL from pywb must give the original bytes.

Prints "OK ..." or what differed, always stops wayback; exits 0 when all
matched, 1 when something differed, 2 for usage or setup errors (bad paths,
wb-manager failing, wayback not answering).
"""

import argparse
import json
import difflib
import html.parser
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

COLLECTION = "trawltest"
START_TIMEOUT = 30.0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Make urllib hand back 3xx responses instead of following them."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def die(message):
    """Setup or usage problem (not a replay mismatch): exit 2."""
    print(f"pywb_replay: {message}", file=sys.stderr)
    sys.exit(2)


def venv_tool(name):
    """A console script installed next to the running python (the venv's bin)."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.access(path, os.X_OK):
        die(f"{path} not found; run scripts/pyenv and use its python")
    return path


def warc_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".warc.gz"))
        elif os.path.isfile(path):
            files.append(path)
        else:
            die(f"no such file or directory: {path}")
    if not files:
        die("no .warc.gz files given")
    return [os.path.abspath(f) for f in files]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_collection(workdir, files):
    for args in (["init", COLLECTION], ["add", COLLECTION, *files]):
        result = subprocess.run([venv_tool("wb-manager"), *args], cwd=workdir,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            die(f"wb-manager {args[0]} failed:\n{result.stdout}{result.stderr}")


def start_wayback(workdir, port, log):
    return subprocess.Popen(
        [venv_tool("wayback"), "-b", "127.0.0.1", "-p", str(port), "-d", workdir],
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, so we can stop all of it
    )


def stop_wayback(proc):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass


def opener():
    # No proxies (the environment may set some) and no redirect following.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect)


def fetch(url, timeout=30, accept_encoding=None):
    """GET url; returns (status, headers, body) for any HTTP status."""
    request = urllib.request.Request(url)
    if accept_encoding:
        request.add_header("Accept-Encoding", accept_encoding)
    try:
        with opener().open(request, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers, err.read()


def wait_until_up(proc, port, log_path):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            fetch(f"http://127.0.0.1:{port}/", timeout=2)
            return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    with open(log_path, encoding="utf-8", errors="replace") as log:
        tail = log.read()[-2000:]
    print(f"pywb_replay: wayback did not answer on port {port} within {START_TIMEOUT:.0f} s\n{tail}",
          file=sys.stderr)
    return False


def describe_body_difference(got, want):
    lines = [f"  body: got {len(got)} bytes, expected {len(want)} bytes"]
    common = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    lines.append(f"  first difference at byte {common}")
    try:
        diff = difflib.unified_diff(want.decode("utf-8").splitlines(), got.decode("utf-8").splitlines(),
                                    "expected", "replayed", lineterm="", n=1)
        lines += ["  " + (line if len(line) <= 160 else line[:160] + "...") for line in list(diff)[:40]]
    except UnicodeDecodeError:
        lines.append(f"  expected[{common}:+40] = {want[common:common + 40]!r}")
        lines.append(f"  replayed[{common}:+40] = {got[common:common + 40]!r}")
    return lines


def location_matches(location, expected, original_url):
    """Does the replayed Location point at the expected URL?

    In id_ mode pywb 2.10 passes the archived Location through unchanged
    (relative stays relative); other modes rewrite it to
    <replay prefix><original target>. Both forms are accepted.
    """
    if not location:
        return False
    expected_abs = urllib.parse.urljoin(original_url, expected)
    if urllib.parse.urljoin(original_url, location) == expected_abs:
        return True
    if location.endswith(expected) or location.endswith(expected_abs):
        return True
    parts = urllib.parse.urlsplit(expected_abs)
    path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    return location.endswith(parts.netloc + path)  # tolerate http/https differences


def compare(status, headers, body, args):
    problems = []
    if args.expect_status is not None:
        if status != args.expect_status:
            problems.append(f"  status: got {status}, expected {args.expect_status}")
    elif args.expect_location:
        if not 300 <= status < 400:
            problems.append(f"  status: got {status}, expected a redirect (3xx)")
    elif status != 200:
        problems.append(f"  status: got {status}, expected 200")
    if args.expect_location:
        location = headers.get("Location")
        if not location_matches(location, args.expect_location, args.url):
            problems.append(f"  Location: got {location!r}, expected it to end with {args.expect_location!r}")
    if args.expect is not None:
        with open(args.expect, "rb") as f:
            want = f.read()
        if body != want:
            problems += describe_body_difference(body, want)
    return problems


class ReplayedRefs(html.parser.HTMLParser):
    """The URLs a rewritten page loads: src/href/poster/srcset attributes and CSS url()s."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if not value:
                continue
            if name in ("src", "href", "poster", "data"):
                self.refs.append(value)
            elif name == "srcset":
                self.refs += [c.split()[0] for c in value.split(",") if c.split()]
            elif name == "style":
                self.refs += re.findall(r"url\(\s*['\"]?([^'\")]+)", value)

    def handle_data(self, data):
        self.refs += re.findall(r"url\(\s*['\"]?([^'\")]+)", data)
        self.refs += re.findall(r"@import\s+['\"]([^'\"]+)", data)


def replay_join(base, ref):
    """Resolves ref against a replay URL as a browser does: urljoin, then the `//` of the
    embedded original URL (which urljoin's path normalisation folds) put back."""
    return re.sub(r"_/(https?:)/(?!/)", r"_/\1//", urllib.parse.urljoin(base, ref))


def check_requisites(port, check):
    """Problems with the requisites of check.url as replayed by pywb's rewriting mode."""
    problems = []
    page_url = f"http://127.0.0.1:{port}/{COLLECTION}/mp_/{check.url}"
    status, _, body = fetch(page_url)
    if status != 200:
        return [f"  rewritten page: status {status}"]
    parser = ReplayedRefs()
    parser.feed(body.decode("utf-8", errors="replace"))
    refs = [replay_join(page_url, r) for r in parser.refs]
    # Stylesheets replayed by pywb are rewritten too: their url()s count as well.
    for ref in list(refs):
        if "cs_/" in ref:
            s, _, css = fetch(ref)
            if s == 200:
                sub = ReplayedRefs()
                sub.handle_data(css.decode("utf-8", errors="replace"))
                refs += [replay_join(ref, r) for r in sub.refs]
    for original, expect in check.requisites.items():
        prefix = f"http://127.0.0.1:{port}/{COLLECTION}/"
        rewritten = [r for r in refs if r.startswith(prefix) and r.endswith(original)]
        if not rewritten:
            near = [r for r in refs if urllib.parse.urlsplit(original).path.split("/")[-1] in r]
            problems.append(f"  requisite {original}: not rewritten into the collection "
                            f"(page refers to {near[:3] or refs[:8]})")
            continue
        status, _, got = fetch(rewritten[0])
        with open(expect, "rb") as f:
            want = f.read()
        if status != 200 or got != want:
            problems.append(f"  requisite {original} ({rewritten[0]}): status {status}, "
                            f"{len(got)} bytes, expected 200 and {len(want)} original bytes")
    return problems


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Replay a URL from WARCs with pywb and compare it.")
    parser.add_argument("--warcs", nargs="+", required=True, metavar="FILE_OR_DIR")
    parser.add_argument("--url", help="the original URL as crawled")
    parser.add_argument("--manifest", metavar="FILE.json",
                        help="many checks against one wayback: a JSON list of objects with keys "
                             "url, and any of expect (file), expect_status, expect_location, "
                             "accept_encoding (same meaning as the flags)")
    parser.add_argument("--expect", metavar="FILE", help="file with the exact expected body bytes")
    parser.add_argument("--expect-status", type=int, metavar="N",
                        help="expected HTTP status (default 200; any 3xx with --expect-location)")
    parser.add_argument("--expect-location", metavar="URL",
                        help="the capture is a redirect whose Location ends with this URL")
    parser.add_argument("--accept-encoding", metavar="VALUE",
                        help="send this Accept-Encoding (e.g. gzip) to get the archived "
                             "Content-Encoding bytes; without it pywb decodes them")
    parser.add_argument("--keep", action="store_true", help="keep the temp collection dir and log")
    args = parser.parse_args(argv)
    if args.manifest:
        with open(args.manifest) as f:
            entries = json.load(f)
        args.checks = [argparse.Namespace(
            url=e["url"], expect=e.get("expect"), expect_status=e.get("expect_status"),
            expect_location=e.get("expect_location"), accept_encoding=e.get("accept_encoding"),
            requisites=e.get("requisites") or {})
            for e in entries]
    elif args.url:
        args.requisites = {}
        args.checks = [args]
    else:
        parser.error("give --url or --manifest")
    for check in args.checks:
        if check.expect is None and check.expect_location is None and check.expect_status is None:
            parser.error(f"{check.url}: give at least one of expect, expect_status, expect_location")
        if check.expect is not None and not os.path.isfile(check.expect):
            parser.error(f"expect file not found: {check.expect}")
    return args


def main(argv=None):
    args = parse_args(argv)
    files = warc_files(args.warcs)
    workdir = tempfile.mkdtemp(prefix="trawl-pywb-")
    log_path = os.path.join(workdir, "wayback.log")
    proc = None
    try:
        make_collection(workdir, files)
        port = free_port()
        with open(log_path, "wb") as log:
            proc = start_wayback(workdir, port, log)
        if not wait_until_up(proc, port, log_path):
            return 2
        results = []
        for check in args.checks:
            replay_url = f"http://127.0.0.1:{port}/{COLLECTION}/id_/{check.url}"
            try:
                status, headers, body = fetch(replay_url, accept_encoding=check.accept_encoding)
            except (urllib.error.URLError, OSError) as err:
                print(f"pywb_replay: fetching {replay_url} failed: {err}", file=sys.stderr)
                return 2
            problems = compare(status, headers, body, check)
            if check.requisites:
                problems += check_requisites(port, check)
            results.append((check, replay_url, status, body, problems))
    finally:
        if proc is not None:
            stop_wayback(proc)
        if args.keep:
            print(f"pywb_replay: kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    failed = 0
    for check, replay_url, status, body, problems in results:
        if problems:
            failed += 1
            print(f"FAILED: replay of {check.url} ({replay_url}) differs:", file=sys.stderr)
            print("\n".join(problems), file=sys.stderr)
        else:
            print(f"OK: {check.url} replays with status {status}, {len(body)} body bytes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
