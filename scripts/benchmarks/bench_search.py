#!/usr/bin/env python3
"""scripts/benchmarks/bench_search.py: owns the full-text search benchmark; run it as
`scripts/bench search`, which builds the release binaries first.

On bench_web (SEARCH_PROFILES: standard, ~25 KB of text per page; small, ~12 KB pages):
  1. Indexing, per profile: a crawl of SEARCH_HOSTS x SEARCH_PAGES pages (no delay), then
     `trawl search-index DIR -o INDEX` into a new index, BENCH_REPS times: pages/s (both
     cores, wall time of the command), CPU us per page, index bytes per page, peak RSS.
  2. Queries: examples/bench_search on the first profile's index (one word, two words, a phrase, a title
     field query; 10 hits with snippets each): p50/p90/p99 in ms, in-process; and the wall
     time of a `trawl search` command (process start and index open included), median.
  3. Cost during a crawl: polite crawls (`--delay 1s --max-pages 3000` on 300 hosts, bound by
     the delay as real crawls are) plain and with --search-index, alternating; pages/s ratio.
     Also the same pair with no delay (CPU-bound: the worst case).
Medians of BENCH_REPS runs. Writes the bench-search block of docs/PERFORMANCE.md.

Knobs (environment): BENCH_REPS=3 SEARCH_PROFILES="standard small" SEARCH_HOSTS=2000
  SEARCH_PAGES=50 BENCH_PORT=8090
  BENCH_OUT=docs/PERFORMANCE.md
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_shared import Web, children_cpu, write_block  # noqa: E402  (the same bench_web driver)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL = os.path.join(REPO, "target", "release")
TRAWL = os.path.join(REL, "trawl")
REPS = int(os.environ.get("BENCH_REPS", "3"))
HOSTS = int(os.environ.get("SEARCH_HOSTS", "2000"))
PAGES = int(os.environ.get("SEARCH_PAGES", "50"))
OUT = os.environ.get("BENCH_OUT", os.path.join(REPO, "docs", "PERFORMANCE.md"))
BEGIN, END = "<!-- bench-search:begin -->", "<!-- bench-search:end -->"
POLITE = ["--delay", "1s", "--max-pages", "3000"]
PROFILES = os.environ.get("SEARCH_PROFILES", "standard small").split()


def rss_kb(pid):
    """(RssAnon, RssFile) of a running process in KB, or None."""
    try:
        fields = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status").read().splitlines() if ":" in l)
        return int(fields["RssAnon"].split()[0]), int(fields["RssFile"].split()[0])
    except (OSError, KeyError, ValueError):
        return None


def timed(cmd):
    """Wall seconds, CPU seconds, the peak anonymous and file-backed RSS (KB, sampled every
    0.1 s: the index files tantivy maps are file-backed pages the kernel can drop), and the
    finished process."""
    cpu0, t0 = children_cpu(), time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    anon = filed = 0
    while p.poll() is None:
        r = rss_kb(p.pid)
        if r:
            anon, filed = max(anon, r[0]), max(filed, r[1])
        time.sleep(0.1)
    out, err = p.communicate()
    p.stdout, p.stderr = out, err
    wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
    if p.returncode not in (0, 4):
        raise SystemExit(f"{cmd[:3]} failed ({p.returncode}): {err[-2000:]}")
    return wall, cpu, (anon, filed), p


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def crawl(web, out, extra):
    stats = out + ".json"
    wall, cpu, _, _ = timed([TRAWL, "crawl", "--seeds", web.seeds, "--out", out, "--concurrency", "256",
                             "--scope", "any", "-q", "--stats", stats] + extra)
    pages = json.load(open(stats))["pages_archived"]
    return {"pps": pages / wall, "cpu_us": cpu / pages * 1e6, "pages": pages}


def indexing(work, profile, queries):
    web = Web(work, HOSTS, PAGES, profile=profile)
    warcs = os.path.join(work, "corpus")
    try:
        c = crawl(web, warcs, ["--delay", "0ms"])
    finally:
        web.stop()
    print(f"corpus: {c['pages']} pages", flush=True)
    runs, index = [], None
    for rep in range(REPS):
        index = os.path.join(work, f"index-{rep}")
        wall, cpu, rss, p = timed([TRAWL, "search-index", warcs, "-o", index])
        pages = int(p.stderr.split("indexed ")[1].split()[0])
        runs.append({"pps": pages / wall, "cpu_us": cpu / pages * 1e6, "anon_mb": rss[0] / 1024,
                     "file_mb": rss[1] / 1024,
                     "bytes_per_page": dir_bytes(index) / pages, "pages": pages})
        print(f"{profile} search-index rep {rep}: {pages} pages, {pages / wall:.0f}/s", flush=True)
        if rep < REPS - 1 or not queries:
            shutil.rmtree(index)
    warc_bytes = dir_bytes(warcs)
    shutil.rmtree(warcs, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    med["warc_bytes_per_page"] = warc_bytes / med["pages"]
    if not queries:
        return med, None
    q = json.loads(subprocess.run([os.path.join(REL, "examples", "bench_search"), index, "400"],
                                  capture_output=True, text=True, check=True).stdout)
    cli = []
    for word in ["page", "\"the page\"", "title:page", "link OR page"] * 3:
        t0 = time.monotonic()
        subprocess.run([TRAWL, "search", index, word], capture_output=True, check=True)
        cli.append((time.monotonic() - t0) * 1e3)
    q["cli_ms"] = statistics.median(cli)
    shutil.rmtree(index, ignore_errors=True)
    return med, q


def crawl_cost(work):
    web = Web(work, 300, 30, profile="standard")
    modes = {"plain": [], "--search-index": None}
    runs = {f"{m}, {d}": [] for m in modes for d in ["--delay 1s", "no delay"]}
    try:
        for rep in range(REPS):
            for delay, flags in [("--delay 1s", POLITE), ("no delay", ["--delay", "0ms"])]:
                for mode in modes:
                    out = os.path.join(work, f"cost-{rep}")
                    extra = [] if mode == "plain" else ["--search-index", out + "-index"]
                    r = crawl(web, out, flags + extra)
                    runs[f"{mode}, {delay}"].append(r)
                    print(f"crawl {mode}, {delay}, rep {rep}: {r['pps']:.0f} pages/s", flush=True)
                    shutil.rmtree(out, ignore_errors=True)
                    shutil.rmtree(out + "-index", ignore_errors=True)
    finally:
        web.stop()
    return {m: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for m, rs in runs.items()}


def main():
    work = tempfile.mkdtemp(prefix="bench-search-")
    try:
        idx, q = {}, None
        for i, profile in enumerate(PROFILES):
            idx[profile], found = indexing(work, profile, queries=i == 0)
            q = q or found
        cost = crawl_cost(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [BEGIN,
             f"Generated by `scripts/bench search` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
             f"bench_web. Medians of {REPS} runs.", "",
             f"Indexing `trawl search-index` (both cores) of a {HOSTS} x {PAGES}-page crawl of each profile:", "",
             "| profile | pages | KB of WARC/page | pages/s | CPU us/page | index bytes/page "
             "| peak RSS: anonymous / mapped index files |",
             "|---|---|---|---|---|---|---|"]
    for profile, r in idx.items():
        lines.append(f"| {profile} | {r['pages']:.0f} | {r['warc_bytes_per_page'] / 1024:.1f} | {r['pps']:.0f} "
                     f"| {r['cpu_us']:.0f} | {r['bytes_per_page']:.0f} | {r['anon_mb']:.0f} MB / {r['file_mb']:.0f} MB |")
    lines += ["",
             f"Queries on the {PROFILES[0]} index ({q['pages']} pages; {q['queries']} queries built from its pages: one word, "
             f"two words, a two-word phrase, title:word; 10 hits with snippets each; {q['with_hits']} had hits), "
             "in-process (examples/bench_search), and a whole `trawl search` command:", "",
             "| p50 | p90 | p99 | max | `trawl search` command, median |", "|---|---|---|---|---|",
             f"| {q['p50_ms']:.2f} ms | {q['p90_ms']:.2f} ms | {q['p99_ms']:.2f} ms | {q['max_ms']:.1f} ms "
             f"| {q['cli_ms']:.0f} ms |", "",
             f"Cost of `--search-index` during a crawl (300 hosts x 30 pages; polite: `{' '.join(POLITE)}`):", "",
             "| crawl | pages | pages/s | vs plain | CPU us/page |", "|---|---|---|---|---|"]
    for mode, r in cost.items():
        base = cost["plain, " + mode.split(", ")[1]]["pps"]
        lines.append(f"| {mode} | {r['pages']:.0f} | {r['pps']:.0f} | {r['pps'] / base:.2f} | {r['cpu_us']:.0f} |")
    lines.append(END)
    write_block(OUT, "Full-text search index", lines)


if __name__ == "__main__":
    main()
