#!/usr/bin/env python3
"""scripts/bench_state_crawl.py — the whole-process side of scripts/bench state: a real trawl
crawl of scripts/link_farm.py that stops (--max-pages) with about URLS URLs queued, sampling the
crawler's RSS from /proc while it runs. Prints one JSON line: pages, URLs queued at the end,
peak RSS (VmHWM, from the crawl's --stats), the largest sampled RSS, run time, store size.

Usage: bench_state_crawl.py URLS [HOSTS] [LINKS]   (run by scripts/bench state --crawl)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAWL = os.path.join(REPO, "target", "release", "trawl")
PORT = int(os.environ.get("BENCH_PORT", "8090"))


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
            [sys.executable, os.path.join(REPO, "scripts", "link_farm.py"), str(PORT), str(hosts), str(links), seeds],
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
            while crawl.poll() is None:
                sampled = max(sampled, rss_kb(crawl.pid))
                time.sleep(0.5)
            elapsed = time.monotonic() - start
            if crawl.returncode not in (0, 4):
                raise SystemExit(f"trawl exited {crawl.returncode}: {crawl.stderr.read()}")
            s = json.load(open(stats))
            store = os.path.join(out, ".trawl-state", "state.redb")
            print(json.dumps({
                "pages": s["pages_archived"],
                "queued_at_end": s["queued_at_end"],
                "hosts": hosts,
                "links_per_page": links,
                "peak_rss_mb": round(s["peak_rss_bytes"] / 2**20),
                "max_sampled_rss_mb": round(sampled / 1024),
                "seconds": round(elapsed, 1),
                "store_mb": round(os.path.getsize(store) / 1e6),
            }))
        finally:
            farm.stdin.close()
            farm.wait(timeout=30)


if __name__ == "__main__":
    main()
