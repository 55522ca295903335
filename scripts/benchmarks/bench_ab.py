#!/usr/bin/env python3
"""scripts/bench ab — owns the A/B comparison of two trawl binaries on the benchmark web.

Usage: scripts/bench ab OLD_BINARY NEW_BINARY [REPS]

Serves the benchmark web (target/release/examples/bench_web, built by `cargo build --release
--example bench_web`) and crawls all of it with each binary in turn, REPS rounds of one run each
(default 3), the order swapped every round (A B, B A, A B...), with no delay, as scripts/bench
does for its no-delay run. Prints, per binary, the median wall time, pages/s, peak RSS (sampled)
and CPU per page (user+sys of the child, from getrusage), the ratio B/A of the medians, and the
median of the rounds' own B/A. Alternating spreads this noisy 2-core machine's drift over both
sides; swapping the order matters too: with A always first, the second run of a round read
2-6% slower (three A/Bs of 2026-11-29: new/old 1.054 and 1.062 with the new build second,
0.979 with it first), so a fixed order takes that for a difference between the builds. Knobs as scripts/bench: BENCH_HOSTS, BENCH_PAGES, BENCH_PORT,
BENCH_CONCURRENCY, BENCH_PROFILE. BENCH_AB_ARGS_A and BENCH_AB_ARGS_B add crawl flags to one
side (shell words), to compare settings of one build, e.g. BENCH_AB_ARGS_B="--gzip-level 1"
with the same binary twice.
"""
import json
import os
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (scripts/benchmarks/bench.py: the same server and measurement code)


def crawl(binary, work, server, name, extra):
    out = os.path.join(work, name)
    stats = out + ".json"
    cmd = [binary, "crawl", "--seeds", server.seeds, "--out", out, "--delay", "0s",
           "--concurrency", str(bench.CONC), "--scope", "any", "-q", "--stats", stats] + extra
    m = bench.run_measured(cmd)
    if m["rc"] not in (0, 4):
        raise SystemExit(f"{binary} failed ({m['rc']}): {m['stderr']}")
    pages = json.load(open(stats))["pages_archived"]
    bench.shutil.rmtree(out, ignore_errors=True)
    return {"wall": m["wall"], "cpu_us_per_page": m["cpu"] / pages * 1e6, "pages_per_s": pages / m["wall"],
            "pages": pages, "peak_rss_mb": m["peak_rss"] / 1e6}


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    sides = {
        "A": (os.path.abspath(sys.argv[1]), shlex.split(os.environ.get("BENCH_AB_ARGS_A", ""))),
        "B": (os.path.abspath(sys.argv[2]), shlex.split(os.environ.get("BENCH_AB_ARGS_B", ""))),
    }
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    runs = {label: [] for label in sides}
    with tempfile.TemporaryDirectory() as work:
        for i in range(reps):
            order = list(sides.items())
            if i % 2:
                order.reverse()
            for label, (binary, extra) in order:
                server = bench.Server(work)
                try:
                    r = crawl(binary, work, server, f"run-{i}", extra)
                finally:
                    server.stop()
                runs[label].append(r)
                print(f"{label} run {i + 1}: {r['pages']} pages, {r['wall']:.1f} s, "
                      f"{r['pages_per_s']:.0f} pages/s, {r['cpu_us_per_page']:.0f} us CPU/page, "
                      f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("wall", "pages_per_s", "cpu_us_per_page", "peak_rss_mb")}
           for k, v in runs.items()}
    for label, (binary, extra) in sides.items():
        m = med[label]
        print(f"{label} {shlex.join([binary] + extra)}: median {m['wall']:.1f} s, {m['pages_per_s']:.0f} pages/s, "
              f"{m['cpu_us_per_page']:.0f} us CPU/page, peak RSS {m['peak_rss_mb']:.0f} MB")
    print(f"B/A: CPU per page {med['B']['cpu_us_per_page'] / med['A']['cpu_us_per_page']:.3f}, "
          f"pages/s {med['B']['pages_per_s'] / med['A']['pages_per_s']:.3f}")
    rounds = list(zip(runs["A"], runs["B"]))
    cpu = statistics.median(b["cpu_us_per_page"] / a["cpu_us_per_page"] for a, b in rounds)
    rate = statistics.median(b["pages_per_s"] / a["pages_per_s"] for a, b in rounds)
    print(f"B/A, median of the rounds: CPU per page {cpu:.3f}, pages/s {rate:.3f}")


if __name__ == "__main__":
    main()
