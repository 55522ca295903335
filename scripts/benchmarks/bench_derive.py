#!/usr/bin/env python3
"""scripts/benchmarks/bench_derive.py: owns the WET/WAT benchmark; run it through scripts/bench derive,
which builds the release binaries first.

For each bench_web profile (standard: ~15/60 KB pages; small: ~12 KB pages, many links):
  1. Crawl cost: the same crawl (no delay, CPU-bound: the worst case) plain, with --wet, and
     with --wet --wat, alternating within each repetition; pages/s over the whole run (the last
     file's derivation included) and the ratio to plain.
  2. Derivation speed on one core (taskset -c 0): `trawl derive wet|wat|all` (and all with
     --no-language) over the plain crawl's WARCs; pages/s and CPU us per page, against the
     crawl's pages/s on two cores.
Medians of BENCH_REPS runs. Writes the bench-derive block of docs/PERFORMANCE.md.

Knobs (environment): BENCH_REPS=3 DERIVE_HOSTS=300 DERIVE_PAGES=30 BENCH_PORT=8090
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
REPS = int(os.environ.get("BENCH_REPS", "3"))
HOSTS = int(os.environ.get("DERIVE_HOSTS", "300"))
PAGES = int(os.environ.get("DERIVE_PAGES", "30"))
OUT = os.environ.get("BENCH_OUT", os.path.join(REPO, "docs", "PERFORMANCE.md"))
BEGIN, END = "<!-- bench-derive:begin -->", "<!-- bench-derive:end -->"
MODES = {"plain": [], "--wet": ["--wet"], "--wet --wat": ["--wet", "--wat"]}
# A polite crawl (the normal case): bound by the per-host delay, not by the CPU.
POLITE = ["--delay", "1s", "--max-pages", "3000"]
DERIVES = {"wet": ["wet"], "wat": ["wat"], "all": ["all"], "all --no-language": ["all", "--no-language"]}


def timed(cmd):
    cpu0, t0 = children_cpu(), time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
    if p.returncode not in (0, 4):
        raise SystemExit(f"{cmd[:3]} failed ({p.returncode}): {p.stderr[-2000:]}")
    return wall, cpu


def profile_rows(work, profile):
    web = Web(work, HOSTS, PAGES, profile=profile)
    crawl_runs = {m: [] for m in MODES}
    crawl_runs.update({f"{m}, --delay 1s": [] for m in ["plain", "--wet --wat"]})
    derive_runs = {d: [] for d in DERIVES}
    try:
        for rep in range(REPS):
            for mode, flags in MODES.items():
                out = os.path.join(work, f"{profile}-{rep}-{mode.replace(' ', '')}")
                stats = out + ".json"
                wall, cpu = timed([os.path.join(REL, "trawl"), "crawl", "--seeds", web.seeds, "--out", out,
                                   "--delay", "0ms", "--concurrency", "256", "--scope", "any", "-q",
                                   "--stats", stats] + flags)
                pages = json.load(open(stats))["pages_archived"]
                crawl_runs[mode].append({"pps": pages / wall, "cpu_us": cpu / pages * 1e6, "pages": pages})
                print(f"{profile} crawl {mode} rep {rep}: {pages} pages, {pages / wall:.0f}/s", flush=True)
                if mode == "plain":
                    for name, args in DERIVES.items():
                        dout = out + "-derived"
                        wall, cpu = timed(["taskset", "-c", "0", os.path.join(REL, "trawl"), "derive"] + args
                                          + [out, "-o", dout])
                        derive_runs[name].append({"pps": pages / wall, "cpu_us": cpu / pages * 1e6})
                        print(f"{profile} derive {name} rep {rep}: {pages / wall:.0f} pages/s", flush=True)
                        shutil.rmtree(dout, ignore_errors=True)
                shutil.rmtree(out, ignore_errors=True)
            for mode in ["plain", "--wet --wat"]:
                out = os.path.join(work, f"{profile}-{rep}-polite")
                stats = out + ".json"
                wall, cpu = timed([os.path.join(REL, "trawl"), "crawl", "--seeds", web.seeds, "--out", out,
                                   "--concurrency", "256", "--scope", "any", "-q", "--stats", stats]
                                  + POLITE + MODES[mode])
                pages = json.load(open(stats))["pages_archived"]
                crawl_runs[f"{mode}, --delay 1s"].append(
                    {"pps": pages / wall, "cpu_us": cpu / pages * 1e6, "pages": pages})
                print(f"{profile} polite crawl {mode} rep {rep}: {pages / wall:.0f}/s", flush=True)
                shutil.rmtree(out, ignore_errors=True)
    finally:
        web.stop()
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    crawl = {m: {"pps": med(r, "pps"), "cpu_us": med(r, "cpu_us"), "pages": med(r, "pages")}
             for m, r in crawl_runs.items()}
    derive = {d: {"pps": med(r, "pps"), "cpu_us": med(r, "cpu_us")} for d, r in derive_runs.items()}
    return crawl, derive


def main():
    work = tempfile.mkdtemp(prefix="bench-derive-")
    results = {}
    try:
        for profile in ["standard", "small"]:
            results[profile] = profile_rows(work, profile)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [BEGIN,
             f"Generated by `scripts/bench derive` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
             f"bench_web, {HOSTS} hosts x {PAGES} pages, crawls with no delay and --concurrency 256 "
             f"(CPU-bound: the worst case for the cost of deriving during the crawl), and polite crawls "
             f"(`{' '.join(POLITE)}`: bound by the delay, as real crawls are). Medians of {REPS} runs.",
             "",
             "| profile | crawl | pages | pages/s | vs plain | CPU us/page |",
             "|---|---|---|---|---|---|"]
    for profile, (crawl, _) in results.items():
        for mode, r in crawl.items():
            base = crawl["plain, --delay 1s" if "delay" in mode else "plain"]["pps"]
            lines.append(f"| {profile} | {mode} | {r['pages']:.0f} | {r['pps']:.0f} | "
                         f"{r['pps'] / base:.2f} | {r['cpu_us']:.0f} |")
    lines += ["", "Deriving afterwards on one core (`taskset -c 0 trawl derive KIND DIR`), against the crawl "
              "on two cores:", "",
              "| profile | derive | pages/s (one core) | CPU us/page | / crawl pages/s |",
              "|---|---|---|---|---|"]
    for profile, (crawl, derive) in results.items():
        for name, r in derive.items():
            lines.append(f"| {profile} | {name} | {r['pps']:.0f} | {r['cpu_us']:.0f} | "
                         f"{r['pps'] / crawl['plain']['pps']:.2f} |")
    lines.append(END)
    write_block(OUT, "WET and WAT derivatives", lines)


if __name__ == "__main__":
    main()
