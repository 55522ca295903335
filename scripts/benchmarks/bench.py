#!/usr/bin/env python3
"""scripts/benchmarks/bench.py — runs the benchmark behind scripts/bench and writes docs/PERFORMANCE.md.

Runs, on the same generated web (target/release/examples/bench_web):
  * the server's own requests/s (wrk, one connection set, one host);
  * BENCH_REPS times: the floor (target/release/examples/bench_floor; each floor figure is the
    median of three measurements taken back to back), on one thread and on two at once, then
    trawl with no delay, the floor again, then trawl with the default 100 ms per-host delay (RSS
    sampled); each no-delay run is divided by the mean of the floors taken just before and
    after it, and each 100 ms run is compared with the ceiling of that floor (2 cores / floor);
    after each no-delay run, the lean pipeline (target/release/examples/bench_pipeline) replays
    that run's requests on one thread and archives them as trawl does, with none of a crawl's
    own work: what networking, request records and writes add to the floor;
  * GNU wget --recursive --warc-file with no wait, for BENCH_WGET_SECONDS (its pages/s is a
    steady rate, so a time-boxed run is enough; wget would need ~10 minutes for the whole web).
The floor is what every archiving crawler must do (issue 30's definition): per page, gzip of the
response at trawl's level (libdeflate, one call per buffer), two SHA-1 digests and html5ever
tokenization with a link-collecting sink; per request, the client side of one HTTP/1.1
exchange on a kept-alive connection with blocking sockets (against the same server) and a small
request record. A run's floor per page is `pages part + its requests per page x per-request
part`, its requests per page being its own count of requests over pages archived.
CPU and peak RSS of each crawler come from getrusage of the child; RSS is also sampled from
/proc while it runs. Figures are medians of the repetitions. Only the part between the
bench markers of the output file is rewritten.
"""
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL = os.path.join(REPO, "target", "release")
HOSTS = int(os.environ.get("BENCH_HOSTS", "2000"))
PAGES = int(os.environ.get("BENCH_PAGES", "30"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
PORT = int(os.environ.get("BENCH_PORT", "8080"))
CONC = int(os.environ.get("BENCH_CONCURRENCY", "256"))
WGET_SECONDS = int(os.environ.get("BENCH_WGET_SECONDS", "120"))
LEVEL = os.environ.get("BENCH_GZIP_LEVEL")
OUT = os.environ.get("BENCH_OUT", os.path.join(REPO, "docs", "PERFORMANCE.md"))
# The web's profile (examples/bench/web.rs): "standard" (pages of ~15 KB and ~60 KB) or "small"
# (~8 KB and ~15 KB, 30-40 links, 30% of them to redirects, 404s and disallowed URLs). Each has
# its own generated block in the output file.
PROFILE = os.environ.get("BENCH_PROFILE", "standard")
PAGE_SIZES = {"standard": "about 15 KB and 60 KB, 20-100 links",
              "small": "about 8 KB and 15 KB, 30-40 links, 30% of them to redirects/404s/disallowed URLs"}[PROFILE]
TAG = "bench" if PROFILE == "standard" else f"bench-{PROFILE}"
BEGIN, END = f"<!-- {TAG}:begin -->", f"<!-- {TAG}:end -->"


def default_gzip_level():
    help_text = subprocess.run([os.path.join(REL, "trawl"), "crawl", "--help"], capture_output=True, text=True).stdout
    m = re.search(r"--gzip-level <N>.*?\[default: (\d+)\]", help_text, re.S)
    return m.group(1) if m else "6"


class Server:
    def __init__(self, work):
        self.seeds = os.path.join(work, "seeds.txt")
        self.proc = subprocess.Popen(
            [os.path.join(REL, "examples", "bench_web"), "--hosts", str(HOSTS), "--pages", str(PAGES),
             "--port", str(PORT), "--profile", PROFILE, "--seeds-out", self.seeds],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"bench_web did not start: {line!r}")

    def cpu(self):
        """The server's CPU time so far (user+sys, seconds), from /proc."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.send_signal(15)
        out, _ = self.proc.communicate(timeout=30)
        return json.loads(out.strip().splitlines()[-1])


def children_usage():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_measured(cmd, timeout=None, cwd=None):
    """Runs cmd; returns wall, cpu (user+sys), peak RSS (sampled), RSS samples [(t, bytes)]."""
    cpu0 = children_usage()
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples = []
    killed = False
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                m = re.search(r"VmRSS:\s+(\d+) kB", f.read())
            if m:
                samples.append((time.monotonic() - start, int(m.group(1)) * 1024))
        except OSError:
            pass
        if timeout and time.monotonic() - start > timeout and not killed:
            proc.terminate()
            killed = True
        # Waits up to the next RSS sample, but returns as soon as the crawler exits, so that
        # the wall time is not rounded up to the sampling period (0.2 s of a ~10 s crawl).
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
    err = proc.stderr.read().decode(errors="replace")
    wall = time.monotonic() - start
    cpu = children_usage() - cpu0
    peak = max((s for _, s in samples), default=0)
    return {"wall": wall, "cpu": cpu, "peak_rss": peak, "samples": samples, "rc": proc.returncode, "stderr": err[-2000:]}


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f.endswith(".warc.gz"):
                total += os.path.getsize(os.path.join(root, f))
    return total


def run_trawl(work, server, name, delay, level, then=None):
    out = os.path.join(work, name)
    stats = out + ".json"
    cmd = [os.path.join(REL, "trawl"), "crawl", "--seeds", server.seeds, "--out", out,
           "--delay", delay, "--concurrency", str(CONC), "--scope", "any", "-q",
           "--gzip-level", level, "--stats", stats]
    server_cpu = server.cpu()
    m = run_measured(cmd)
    m["server_cpu"] = server.cpu() - server_cpu
    if m["rc"] not in (0, 4):
        raise SystemExit(f"trawl failed ({m['rc']}): {m['stderr']}")
    s = json.load(open(stats))
    m.update(pages=s["pages_archived"], page_bytes=s["bytes_downloaded"], warc_bytes=dir_bytes(out),
             requests=s["requests"], min_gap_ms=None)
    if then:
        m["then"] = then(out)
    shutil.rmtree(out, ignore_errors=True)
    return m


def run_wget(work, server):
    out = os.path.join(work, "wget")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "wget.log")
    cmd = ["wget", "--recursive", "--level=inf", "--span-hosts", "--no-verbose", "-e", "robots=on",
           "--reject", "pdf", "--warc-file=" + os.path.join(out, "bench"), "--no-warc-keep-log",
           "-P", os.path.join(out, "files"), "-i", server.seeds, "-o", log]
    m = run_measured(cmd, timeout=WGET_SECONDS)
    # Unique page URLs: wget fetches some pages twice when several seeds' recursions meet
    # (and ten times with --delete-after, which is why it is not used); a page counts once.
    seen = {}
    for line in open(log, errors="replace"):
        m2 = re.search(r"URL:(\S+) \[(\d+)(?:/\d+)?\]", line)
        if m2 and "/p/" in m2.group(1):
            seen[m2.group(1)] = int(m2.group(2))
    pages = len(seen)
    page_bytes = sum(seen.values())
    m.update(pages=pages, page_bytes=page_bytes, warc_bytes=dir_bytes(out), requests=None)
    shutil.rmtree(out, ignore_errors=True)
    return m


# Floor measurements taken back to back for each floor figure, of which the median is kept: a
# single one can land on a short slow spell of this machine (one measured 1,253 us against 780
# a minute earlier) and move the ratio of the run it is compared with by a third.
FLOOR_TAKES = 3


# Exchanges (and request records) per floor take: ~0.1 s of CPU.
FLOOR_EXCHANGES = 3000


def floor_once(level, threads):
    cmd = [os.path.join(REL, "examples", "bench_floor"), "--hosts", str(HOSTS), "--pages", str(PAGES),
           "--port", str(PORT), "--gzip-level", level, "--sample", "3000", "--profile", PROFILE,
           "--threads", str(threads)]
    if threads == 1:
        cmd += ["--requests", str(FLOOR_EXCHANGES)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    d["parts"] = out.stderr.strip()
    return d


def floor(work, level, threads=1):
    """The median of FLOOR_TAKES floor measurements, with its parts; the others in "takes".
    On one thread the per-request part is measured too (against a server of its own), its
    figure the median of the takes' as well."""
    server = Server(work) if threads == 1 else None
    try:
        takes = [floor_once(level, threads) for _ in range(FLOOR_TAKES)]
    finally:
        if server:
            server.stop()
    takes.sort(key=lambda d: d["us_per_page"])
    d = dict(takes[len(takes) // 2])
    d["takes"] = [t["us_per_page"] for t in takes]
    if threads == 1:
        d["request_us"] = statistics.median(t["exchange_us"] + t["record_us"] for t in takes)
        d["exchange_us"] = statistics.median(t["exchange_us"] for t in takes)
        d["record_us"] = statistics.median(t["record_us"] for t in takes)
    return d


def floor_of_run(run, fl):
    """The floor per page of one run: the pages part plus its requests per page times the
    per-request part (both the mean of the floors taken around the run)."""
    return fl["us_per_page"] + run["requests"] / max(run["pages"], 1) * fl["request_us"]


def pipeline(level, warcs):
    """The lean pipeline over the requests of the crawl whose WARC files are in `warcs`."""
    out = subprocess.run([os.path.join(REL, "examples", "bench_pipeline"), "--warcs", warcs,
                          "--out", warcs + ".pipeline.warc.gz", "--gzip-level", level],
                         capture_output=True, text=True, check=True)
    os.remove(warcs + ".pipeline.warc.gz")
    return json.loads(out.stdout)


def wrk_rps():
    out = subprocess.run(["wrk", "-t1", "-c64", "-d5s", f"http://127.1.0.1:{PORT}/p/1.html"],
                         capture_output=True, text=True)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    return float(m.group(1)) if m else None


def summarize(runs):
    pick = lambda k: statistics.median(r[k] for r in runs)
    pages = pick("pages")
    wall = pick("wall")
    cpu = pick("cpu")
    return {
        "reps": len(runs),
        "pages": int(pages),
        "wall": wall,
        "pages_per_s": statistics.median(r["pages"] / r["wall"] for r in runs),
        "mb_per_s": statistics.median(r["page_bytes"] / r["wall"] / 1e6 for r in runs),
        "cpu": cpu,
        "cpu_us_per_page": statistics.median(r["cpu"] / max(r["pages"], 1) * 1e6 for r in runs),
        "peak_rss_mb": max(r["peak_rss"] for r in runs) / 1e6,
        "warc_mb": pick("warc_bytes") / 1e6,
        "requests_per_page": (statistics.median(r["requests"] / max(r["pages"], 1) for r in runs)
                              if all(r.get("requests") is not None for r in runs) else None),
    }


def rss_profile(run):
    """RSS at 10% and at 100% of the run's wall time (sampled)."""
    samples = run["samples"]
    if not samples:
        return None, None
    t10 = run["wall"] * 0.1
    early = max((s for t, s in samples if t <= t10), default=samples[0][1])
    return early / 1e6, max(s for _, s in samples) / 1e6


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} vCPU ({cpu}), {mem:.0f} GiB RAM, {platform.system()} {platform.release()}"


def main():
    level = LEVEL or default_gzip_level()
    work = tempfile.mkdtemp(prefix="trawl-bench-")
    results = {"level": level}
    try:
        print(f"bench ({PROFILE} web): {HOSTS} hosts x {PAGES} pages, gzip level {level}, {REPS} repetitions", flush=True)
        server = Server(work)
        results["server_rps"] = wrk_rps()
        print(f"  server: {results['server_rps']:.0f} requests/s (wrk, 64 connections, one host)", flush=True)
        server.stop()

        # The floor is measured right before and right after each no-delay run, and each run is
        # divided by the mean of the two: this machine's speed drifts by tens of percent over
        # minutes, and a floor taken minutes apart from the crawl it is compared with would
        # carry that drift (one floor before each run measured 857 and 1,317 us two minutes
        # apart while trawl stayed within 1%).
        # The 100 ms runs alternate with them, for the same reason.
        floors, floors2, nodelay, delayed, delay_servers, nodelay_servers = [], [], [], [], [], []
        for i in range(REPS):
            floors.append(floor(work, level))
            floors2.append(floor(work, level, threads=2))
            server = Server(work)

            def stop_then_pipeline(warcs, server=server):
                # The crawl's own requests end here: the lean pipeline replays them against a
                # server of its own, so they do not count in the middle-half rate.
                nodelay_servers.append(server.stop())
                replay = Server(work)
                try:
                    return pipeline(level, warcs)
                finally:
                    replay.stop()
            nodelay.append(run_trawl(work, server, f"trawl-nodelay-{i}", "0ms", level,
                                     then=stop_then_pipeline))
            # And after: the run is compared with the mean of the floors on either side of it.
            before, before_req = floors[-1]["us_per_page"], floors[-1]["request_us"]
            later = floor(work, level)
            after, after_req = later["us_per_page"], later["request_us"]
            floors[-1] = dict(floors[-1], us_per_page=(before + after) / 2, before=before, after=after,
                              request_us=(before_req + after_req) / 2,
                              exchange_us=(floors[-1]["exchange_us"] + later["exchange_us"]) / 2,
                              record_us=(floors[-1]["record_us"] + later["record_us"]) / 2,
                              takes=floors[-1]["takes"] + later["takes"])
            run = nodelay[-1]
            print(f"  floor: pages {before:.0f} before, {after:.0f} after (takes {'/'.join(f'{x:.0f}' for x in floors[-1]['takes'])}; "
                  f"both cores busy: {floors2[-1]['us_per_page']:.0f}), per request {before_req:.1f} before, {after_req:.1f} after; "
                  f"trawl 0ms #{i + 1}: {run['pages'] / run['wall']:.0f} pages/s, "
                  f"{run['cpu'] / run['pages'] * 1e6:.0f} us/page, {run['requests'] / run['pages']:.2f} requests/page, "
                  f"floor {floor_of_run(run, floors[-1]):.0f} us/page; "
                  f"lean pipeline {run['then']['us_per_page']:.0f} us/page", flush=True)
            server = Server(work)
            delayed.append(run_trawl(work, server, f"trawl-delay-{i}", "100ms", level))
            delay_servers.append(server.stop())
            print(f"  trawl 100ms #{i + 1}: {delayed[-1]['pages'] / delayed[-1]['wall']:.0f} pages/s, "
                  f"{delayed[-1]['cpu'] / delayed[-1]['pages'] * 1e6:.0f} us/page, "
                  f"middle-half rate {delay_servers[-1]['middle_rate']:.0f} requests/s "
                  f"(no delay: {nodelay_servers[-1]['middle_rate']:.0f}), "
                  f"min gap {delay_servers[-1]['min_gap_ms']} ms", flush=True)
        results["trawl_nodelay"] = summarize(nodelay)
        results["trawl_delay"] = summarize(delayed)
        # Politeness holds in every run: the smallest gap of all, the violations of all.
        results["delay_server"] = {
            "min_gap_ms": min(d["min_gap_ms"] for d in delay_servers),
            "private_violations": sum(d["private_violations"] for d in delay_servers),
        }
        # Memory over time is read from the first run (its samples cover the whole run).
        results["rss_10"], results["rss_100"] = rss_profile(delayed[0])
        results["floor_us"] = statistics.median(f["us_per_page"] for f in floors)
        results["floor2_us"] = statistics.median(f["us_per_page"] for f in floors2)
        results["floor_parts"] = sorted(floors, key=lambda f: f["us_per_page"])[len(floors) // 2]["parts"]
        # Each no-delay run against its own floor (pages part + its requests x per-request part).
        results["run_floor_us"] = statistics.median(floor_of_run(r, f) for r, f in zip(nodelay, floors))
        results["request_us"] = statistics.median(f["request_us"] for f in floors)
        results["exchange_us"] = statistics.median(f["exchange_us"] for f in floors)
        results["record_us"] = statistics.median(f["record_us"] for f in floors)
        results["floor_ratios"] = [r["cpu"] / r["pages"] * 1e6 / floor_of_run(r, f) for r, f in zip(nodelay, floors)]
        results["floor_ratio"] = statistics.median(results["floor_ratios"])
        # For reading: against the pages part alone (the floor before issue 30), and the pages
        # part measured on both cores at once.
        per_run = lambda fl: statistics.median(
            r["cpu"] / r["pages"] * 1e6 / f["us_per_page"] for r, f in zip(nodelay, fl))
        results["pages_floor_ratio"], results["floor2_ratio"] = per_run(floors), per_run(floors2)
        # For reading: each run against the lowest of the floor takes around it. This machine's
        # noise only ever slows a take down, so the lowest is the floor's own cost, and the
        # ratio against it is the one a slow spell cannot flatter.
        results["floor_ratios_low"] = [
            r["cpu"] / r["pages"] * 1e6 / (min(f["takes"]) + r["requests"] / r["pages"] * f["request_us"])
            for r, f in zip(nodelay, floors)]
        # The lean pipeline against the same floors, and trawl against the pipeline of its run.
        results["pipeline_us"] = statistics.median(r["then"]["us_per_page"] for r in nodelay)
        results["pipeline_ratio"] = statistics.median(
            r["then"]["us_per_page"] / f["us_per_page"] for r, f in zip(nodelay, floors))
        # The server shares the two cores: its CPU per page caps what any crawler can reach.
        results["server_us"] = statistics.median(r["server_cpu"] / r["pages"] * 1e6 for r in nodelay)
        results["trawl_vs_pipeline"] = [r["cpu"] / r["pages"] * 1e6 / r["then"]["us_per_page"] for r in nodelay]
        results["floor_range"] = (min(min(f["takes"]) for f in floors), max(max(f["takes"]) for f in floors))
        # The 100 ms goal (issue 17): pages/s >= 0.8 x min(politeness ceiling, cores / floor), each
        # 100 ms run against the floor taken minutes before it; and, for reading, against trawl's
        # own ceiling (cores / its CPU per page in the no-delay run just before).
        cores = os.cpu_count() or 2
        pps = lambda r: r["pages"] / r["wall"]
        results["delay_vs_floor"] = statistics.median(
            pps(d) / min(HOSTS * 10.0, cores / (f["us_per_page"] / 1e6)) for d, f in zip(delayed, floors))
        results["delay_vs_own"] = statistics.median(
            pps(d) / min(HOSTS * 10.0, cores / (n["cpu"] / n["pages"])) for d, n in zip(delayed, nodelay))
        # The 100 ms goals (issue 30), each 100 ms run against the no-delay run before it: CPU
        # per page, and the server's rate over the middle half of the requests; they apply when
        # the politeness ceiling is at least 3x the no-delay rate.
        cpu_pp = lambda r: r["cpu"] / r["pages"]
        results["delay_cpu_ratios"] = [cpu_pp(d) / cpu_pp(n) for d, n in zip(delayed, nodelay)]
        results["delay_cpu_ratio"] = statistics.median(results["delay_cpu_ratios"])
        results["delay_rate_ratios"] = [d["middle_rate"] / max(n["middle_rate"], 1e-9)
                                        for d, n in zip(delay_servers, nodelay_servers)]
        results["delay_rate_ratio"] = statistics.median(results["delay_rate_ratios"])
        results["ceiling_over_nodelay"] = HOSTS * 10.0 / statistics.median(pps(n) for n in nodelay)

        server = Server(work)
        wget = run_wget(work, server)
        server.stop()
        results["wget"] = summarize([wget])
        print(f"  wget: {results['wget']['pages_per_s']:.0f} pages/s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_report(results)


def write_report(r):
    t, d, w = r["trawl_nodelay"], r["trawl_delay"], r["wget"]
    floor_us = r["run_floor_us"]
    cores = os.cpu_count() or 2
    politeness_ceiling = HOSTS * 10.0
    cpu_ceiling = cores / (t["cpu_us_per_page"] / 1e6)
    ceiling = min(politeness_ceiling, cpu_ceiling)
    floor_ceiling = min(politeness_ceiling, cores / (floor_us / 1e6))
    rows = []
    for name, s in [("trawl, 100 ms delay", d), ("trawl, no delay", t), ("wget, no wait", w)]:
        rows.append(f"| {name} | {s['reps']} | {s['pages']} | {s['wall']:.1f} | {s['pages_per_s']:.0f} | {s['mb_per_s']:.1f} "
                    f"| {s['cpu']:.1f} | {s['cpu_us_per_page']:.0f} | {s['peak_rss_mb']:.0f} | {s['warc_mb']:.0f} |")
    ceiling_ok = r["ceiling_over_nodelay"] >= 3
    checks = [
        ("trawl CPU per page / floor (each run against the floors taken just before and after it, "
         "with its own requests per page)",
         f"{r['floor_ratio']:.2f}x ({' / '.join(f'{x:.2f}' for x in r['floor_ratios'])})", "<= 1.3x",
         r["floor_ratio"] <= 1.3),
        ("(for reading) trawl CPU per page / the floor's pages part alone (the floor before issue 30)",
         f"{r['pages_floor_ratio']:.2f}x", "", None),
        ("(for reading) trawl CPU per page / the lowest floor take around each run, run by run",
         f"{statistics.median(r['floor_ratios_low']):.2f}x ({' / '.join(f'{x:.2f}' for x in r['floor_ratios_low'])})",
         "", None),
        ("(for reading) trawl CPU per page / the lean pipeline after the same run, run by run",
         f"{statistics.median(r['trawl_vs_pipeline']):.2f}x ({' / '.join(f'{x:.2f}' for x in r['trawl_vs_pipeline'])})",
         "", None),
        ("politeness ceiling / no-delay pages/s (the two 100 ms goals below apply from 3x)",
         f"{r['ceiling_over_nodelay']:.1f}x", ">= 3x", ceiling_ok),
        ("100 ms run CPU per page / the no-delay run's before it",
         f"{r['delay_cpu_ratio']:.2f}x ({' / '.join(f'{x:.2f}' for x in r['delay_cpu_ratios'])})", "<= 1.05x",
         r["delay_cpu_ratio"] <= 1.05 if ceiling_ok else None),
        ("100 ms run requests/s over the middle half of its requests / the no-delay run's (server's clock)",
         f"{r['delay_rate_ratio']:.2f}x ({' / '.join(f'{x:.2f}' for x in r['delay_rate_ratios'])})", ">= 0.9x",
         r["delay_rate_ratio"] >= 0.9 if ceiling_ok else None),
        ("(for reading) 100 ms run / min(politeness, 2 cores / floor) (the goal before issue 30)",
         f"{r['delay_vs_floor']:.2f} (medians: {d['pages_per_s']:.0f} / {floor_ceiling:.0f})", "", None),
        ("(for reading) 100 ms run / trawl's own CPU ceiling (2 cores / its no-delay CPU per page, run by run)",
         f"{r['delay_vs_own']:.2f} (medians: {d['pages_per_s']:.0f} / {ceiling:.0f})", "", None),
        ("trawl / wget pages/s (no delay)", f"{t['pages_per_s'] / w['pages_per_s']:.1f}x", ">= 8x",
         t["pages_per_s"] / w["pages_per_s"] >= 8),
        ("trawl / wget CPU per page", f"{t['cpu_us_per_page'] / w['cpu_us_per_page']:.2f}", "<= 0.25",
         t["cpu_us_per_page"] / w["cpu_us_per_page"] <= 0.25),
        ("peak RSS at 10% / 100% of the 100 ms run", f"{r['rss_10']:.0f} MB / {r['rss_100']:.0f} MB", "flat",
         r["rss_100"] <= r["rss_10"] * 1.5 + 50),
    ]
    text = [
        BEGIN,
        f"Generated by `scripts/bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        f"Machine: {machine()}. Web ({PROFILE} profile): {HOSTS} hosts x {PAGES} pages ({PAGE_SIZES}), "
        f"gzip level {r['level']}, trawl `--concurrency {CONC} --scope any`.",
        "",
        f"- bench_web server: {r['server_rps']:.0f} requests/s on one thread (wrk, 64 connections, 60 KB page), "
        "far above any crawler here.",
        f"- floor, what every archiving crawler does (one thread, the mean of one taken before and one after each "
        f"no-delay run, each the median of {FLOOR_TAKES} taken back to back; median of {REPS}): "
        f"**{floor_us:.0f} us/page** = pages part {r['floor_us']:.0f} us (gzip level {r['level']} of the response, "
        f"two SHA-1 digests, html5ever tokenization for links; single measurements {r['floor_range'][0]:.0f}-"
        f"{r['floor_range'][1]:.0f}; {r['floor_parts']}) + {t['requests_per_page']:.2f} requests per page x "
        f"{r['request_us']:.1f} us per request (the client side of an HTTP/1.1 exchange on a kept-alive blocking "
        f"connection to the same server, {r['exchange_us']:.1f} us, and a small request record, gzip + SHA-1, "
        f"{r['record_us']:.1f} us). The pages part on both cores at once: {r['floor2_us']:.0f} us/page, and trawl "
        f"at {r['floor2_ratio']:.2f}x of it.",
        f"- lean pipeline (the no-delay run's requests replayed one after another on one thread, blocking "
        f"sockets, one connection per host, archived as trawl does: request and response records, their "
        f"digests and gzip members written to a file, links of every page extracted; no robots rules, "
        f"admission, seen tests, frontier, politeness or concurrency; median of {REPS}): "
        f"**{r['pipeline_us']:.0f} us/page**, {r['pipeline_ratio']:.2f}x the pages part of the floor around its run "
        f"(a diagnostic: it counts the network, records and writes, and none of a crawl's own work; against the "
        f"whole floor, {r['pipeline_us'] / floor_us:.2f}x). The benchmark server, on the same two cores, spent "
        f"{r['server_us']:.0f} us/page during the no-delay runs.",
        f"- politeness ceiling {HOSTS} hosts x 10/s = {politeness_ceiling:.0f} pages/s; CPU ceiling of the floor "
        f"{cores} cores / {floor_us:.0f} us = {cores / (floor_us / 1e6):.0f} pages/s; trawl's own, {cores} cores / "
        f"{t['cpu_us_per_page']:.0f} us = {cpu_ceiling:.0f} pages/s.",
        f"- trawl made {t['requests_per_page']:.2f} requests per archived page (robots.txt, redirects, 404s, "
        "skipped types included).",
        f"- 100 ms run: the server saw a smallest gap of {r['delay_server']['min_gap_ms']} ms between two requests to one "
        f"host and {r['delay_server']['private_violations']} requests under robots-disallowed /private/.",
        "",
        "| run | reps | pages | wall s | pages/s | MB/s pages | CPU s (user+sys) | CPU us/page | peak RSS MB | WARC MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "| target | measured | goal | met |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {'' if ok is None else 'yes' if ok else 'no'} |" for a, b, c, ok in checks],
        "",
        f"wget ran for {WGET_SECONDS} s of the same web (its rate is steady; the whole web would take it ~10 min).",
        END,
    ]
    block = "\n".join(text)
    doc = open(OUT).read() if os.path.exists(OUT) else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    else:
        doc += "\n" + block + "\n"
    with open(OUT, "w") as f:
        f.write(doc)
    print("\n" + block)
    print(f"\nwritten to {OUT}")


if __name__ == "__main__":
    main()
