#!/usr/bin/env python3
"""scripts/benchmarks/bench_state_crawl.py — the whole-process side of scripts/bench state: a real trawl
crawl of scripts/benchmarks/link_farm.py that stops (--max-pages) with about URLS URLs queued, sampling the
crawler's RSS from /proc while it runs. As the crawl grows it prints a JSON line at each STEP
admitted URLs (queued + fetched; STEP = 10,000,000, or URLS/10 when smaller): admitted URLs/s
and pages/s over the last step, RSS, and bytes on disk per URL (the crawl state: the database
and the seen set's runs); at the end
one line: pages, URLs queued at the end, peak RSS (VmHWM, from the crawl's --stats), the largest
sampled RSS, run time, store size.

Usage: bench_state_crawl.py URLS [HOSTS] [LINKS]   (run by scripts/bench state --crawl)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAWL = os.path.join(REPO, "target", "release", "trawl")
PORT = int(os.environ.get("BENCH_PORT", "8090"))


def state_bytes(state):
    """Bytes of the crawl state: the database file and the seen set's runs."""
    total = 0
    for root, _, files in os.walk(state):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass  # a run merged away between the listing and the stat
    return total


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    urls = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    hosts = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    links = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
    pages = -(-urls // links)
    with tempfile.TemporaryDirectory(prefix="trawl-bench-state-") as work:
        seeds = os.path.join(work, "seeds.txt")
        farm = subprocess.Popen(
            [sys.executable, os.path.join(REPO, "scripts", "benchmarks", "link_farm.py"), str(PORT), str(hosts), str(links), seeds],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            if farm.stdout.readline().strip() != "ready":
                raise SystemExit("link_farm.py did not start")
            out, stats = os.path.join(work, "out"), os.path.join(work, "stats.json")
            cmd = [TRAWL, "crawl", "--seeds", seeds, "--out", out, "--allow-private", "--delay", "0",
                   "--max-pages", str(pages), "--scope", "any", "-q", "--stats", stats]
            start = time.monotonic()
            crawl = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
            sampled = 0
            store = os.path.join(out, ".trawl-state")
            step = min(10_000_000, max(1, urls // 10))
            next_mark, last = step, (start, 0, 0)
            while crawl.poll() is None:
                rss = rss_kb(crawl.pid)
                sampled = max(sampled, rss)
                try:
                    st = json.load(open(os.path.join(out, ".trawl-status.json")))
                except (OSError, ValueError):
                    st = None
                if st:
                    admitted = st["queued"] + st["pages"]
                    if admitted >= next_mark:
                        now = time.monotonic()
                        t0, a0, p0 = last
                        print(json.dumps({
                            "admitted": admitted,
                            "seconds": round(now - start, 1),
                            "admitted_per_s": round((admitted - a0) / (now - t0)),
                            "pages_per_s": round((st["pages"] - p0) / (now - t0), 1),
                            "rss_mb": round(rss / 1024),
                            "disk_bytes_per_url": round(state_bytes(store) / admitted),
                        }), flush=True)
                        last = (now, admitted, st["pages"])
                        while next_mark <= admitted:
                            next_mark += step
                time.sleep(0.5)
            elapsed = time.monotonic() - start
            if crawl.returncode not in (0, 4):
                raise SystemExit(f"trawl exited {crawl.returncode}: {crawl.stderr.read()}")
            s = json.load(open(stats))
            print(json.dumps({
                "pages": s["pages_archived"],
                "queued_at_end": s["queued_at_end"],
                "hosts": hosts,
                "links_per_page": links,
                "peak_rss_mb": round(s["peak_rss_bytes"] / 2**20),
                "max_sampled_rss_mb": round(sampled / 1024),
                "seconds": round(elapsed, 1),
                "store_mb": round(state_bytes(store) / 1e6),
            }))
        finally:
            farm.stdin.close()
            farm.wait(timeout=30)


if __name__ == "__main__":
    main()
