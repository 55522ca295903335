#!/usr/bin/env python3
"""scripts/benchmarks/bench_shared.py: owns the shared-crawl (Redis) benchmark; run it through
scripts/bench shared, which builds the release binaries and installs redis-server if missing.

Four measurements, written to the `bench-shared` block of docs/PERFORMANCE.md:
  A. One worker in Redis mode vs a crawl of its own, same web (bench_web, standard profile),
     no delay and the default 100 ms: pages/s and CPU per page (trawl's, and Redis's).
  B. Scaling when each worker is bound by latency, not by the 2 cores: bench_web answers every
     request after --latency-ms; 1, 2, 4, 8 workers with a small --concurrency each, each run
     for --time-limit LAT_SECONDS on a web larger than they can finish; pages/s (over the whole
     wall time, start-up and stop included), Redis CPU per page (INFO cpu) and Redis server time
     per page (INFO commandstats); and one process of its own with the same --concurrency.
  C. Redis memory per URL (seen set + queue) at 1M URLs (examples/shared_memory).
  D. One worker against a crawl of its own on a few hosts with no delay, every response a few
     ms late: each host is fetched one request at a time, so the waits for Redis between a
     host's batches show in the wall time.
Medians of BENCH_REPS runs (A, B and D).

Knobs (environment): BENCH_REPS=3 SHARED_HOSTS=1000 SHARED_PAGES=30 LAT_HOSTS=2000 LAT_PAGES=10
  LAT_MS=200 LAT_CONC=8 LAT_SECONDS=20 WORKERS="1 2 4 8" MEM_URLS=1000000 FEW_HOSTS=4
  FEW_PAGES=1500 FEW_MS=2 BENCH_PORT=8090
  BENCH_OUT=docs/PERFORMANCE.md
"""

import contextlib
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REL = os.path.join(REPO, "target", "release")
REPS = int(os.environ.get("BENCH_REPS", "3"))
HOSTS = int(os.environ.get("SHARED_HOSTS", "1000"))
PAGES = int(os.environ.get("SHARED_PAGES", "30"))
LAT_HOSTS = int(os.environ.get("LAT_HOSTS", "2000"))
LAT_PAGES = int(os.environ.get("LAT_PAGES", "10"))
LAT_SECONDS = int(os.environ.get("LAT_SECONDS", "20"))
LAT_MS = int(os.environ.get("LAT_MS", "200"))
LAT_CONC = int(os.environ.get("LAT_CONC", "8"))
WORKERS = [int(n) for n in os.environ.get("WORKERS", "1 2 4 8").split()]
MEM_URLS = int(os.environ.get("MEM_URLS", "1000000"))
FEW_HOSTS = int(os.environ.get("FEW_HOSTS", "4"))
FEW_PAGES = int(os.environ.get("FEW_PAGES", "1500"))
FEW_MS = int(os.environ.get("FEW_MS", "2"))
PORT = int(os.environ.get("BENCH_PORT", "8090"))
OUT = os.environ.get("BENCH_OUT", os.path.join(REPO, "docs", "PERFORMANCE.md"))
BEGIN, END = "<!-- bench-shared:begin -->", "<!-- bench-shared:end -->"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class RedisServer:
    """redis-server as the README tells users to run it: AOF on (fsync every second),
    noeviction."""

    def __init__(self, work):
        self.port = free_port()
        self.dir = os.path.join(work, "redis")
        os.makedirs(self.dir)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
             "--maxmemory-policy", "noeviction"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.cli("ping") == "PONG":
                return
            time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def url(self):
        return f"redis://127.0.0.1:{self.port}/"

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True)
        return r.stdout.strip()

    def info(self, section):
        out = {}
        for line in self.cli("info", section).splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                out[k] = v.strip()
        return out

    def cpu(self):
        i = self.info("cpu")
        return float(i["used_cpu_user"]) + float(i["used_cpu_sys"])

    def command_usec(self):
        total = 0
        for k, v in self.info("commandstats").items():
            if k.startswith("cmdstat_"):
                fields = dict(p.split("=") for p in v.split(","))
                total += int(fields["usec"])
        return total

    def reset(self):
        self.cli("flushall")
        self.cli("config", "resetstat")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class Web:
    def __init__(self, work, hosts, pages, profile="standard", latency_ms=0):
        self.seeds = os.path.join(work, f"seeds-{hosts}-{latency_ms}.txt")
        self.proc = subprocess.Popen(
            [os.path.join(REL, "examples", "bench_web"), "--hosts", str(hosts), "--pages", str(pages),
             "--port", str(PORT), "--profile", profile, "--seeds-out", self.seeds,
             "--latency-ms", str(latency_ms), "--threads", "1"],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"bench_web did not start: {line!r}")

    def stop(self):
        self.proc.send_signal(15)
        out, _ = self.proc.communicate(timeout=30)
        return json.loads(out.strip().splitlines()[-1])


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def crawl_cmd(out, seeds, delay, conc, redis=None, crawl=None, worker=None, limit=None):
    cmd = [os.path.join(REL, "trawl"), "crawl", "--out", out, "--delay", delay,
           "--concurrency", str(conc), "--scope", "any", "-q", "--stats", out + ".json"]
    if limit:
        cmd += ["--time-limit", limit]
    if seeds:
        cmd += ["--seeds", seeds]
    if redis:
        cmd += ["--redis", redis, "--crawl-id", crawl, "--worker-id", worker]
    return cmd


def run_workers(cmds):
    """Runs the commands at once; returns wall seconds, their CPU seconds and pages."""
    cpu0 = children_cpu()
    start = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in cmds]
    errs = [p.communicate()[1].decode(errors="replace") for p in procs]
    wall = time.monotonic() - start
    cpu = children_cpu() - cpu0
    pages = requests = 0
    for c, p, e in zip(cmds, procs, errs):
        if p.returncode not in (0, 4, 8):
            raise SystemExit(f"trawl failed ({p.returncode}): {e[-2000:]}")
        stats = json.load(open(c[c.index("--stats") + 1]))
        pages += stats["pages_archived"]
        requests += stats["requests"]
    run_workers.requests = requests
    return wall, cpu, pages


def part_a(work, redis):
    web = Web(work, HOSTS, PAGES)
    try:
        return local_vs_worker(work, redis, web, "A", ["0ms", "100ms"])
    finally:
        web.stop()


def part_d(work, redis):
    web = Web(work, FEW_HOSTS, FEW_PAGES, profile="small", latency_ms=FEW_MS)
    try:
        return local_vs_worker(work, redis, web, "D", ["0ms"])
    finally:
        web.stop()


def local_vs_worker(work, redis, web, part, delays):
    """The crawl of `web` by a process of its own and by one worker through Redis, for each
    delay. The two alternate within each repetition, so that the machine's drift (this 2-core
    machine is noisy over minutes) falls on both modes alike."""
    runs = {}
    for delay in delays:
        for rep in range(REPS):
            for mode in ["local", "redis"]:
                out = os.path.join(work, f"{part}-{mode}-{delay}-{rep}")
                redis.reset()
                crawl = f"{part}-{delay}-{rep}"
                cmd = crawl_cmd(out, web.seeds, delay, 256,
                                *( (redis.url(), crawl, "w1") if mode == "redis" else ()))
                rcpu0 = redis.cpu()
                wall, cpu, pages = run_workers([cmd])
                rcpu = redis.cpu() - rcpu0 if mode == "redis" else 0.0
                runs.setdefault((mode, delay), []).append(
                    {"wall": wall, "cpu": cpu, "pages": pages, "redis_cpu": rcpu})
                shutil.rmtree(out, ignore_errors=True)
                print(f"{part} {mode} delay {delay} rep {rep}: {pages} pages in {wall:.1f} s, "
                      f"cpu {cpu:.1f} s, redis cpu {rcpu:.2f} s", flush=True)
    rows = {}
    for key, rs in runs.items():
        rows[key] = {
            "pages": statistics.median(r["pages"] for r in rs),
            "pages_per_s": statistics.median(r["pages"] / r["wall"] for r in rs),
            "cpu_us": statistics.median(r["cpu"] / r["pages"] * 1e6 for r in rs),
            "redis_us": statistics.median(r["redis_cpu"] / r["pages"] * 1e6 for r in rs),
        }
    return rows


def part_b(work, redis):
    web = Web(work, LAT_HOSTS, LAT_PAGES, profile="small", latency_ms=LAT_MS)
    limit = f"{LAT_SECONDS}s"
    rows = {}
    try:
        for n in [0] + WORKERS:  # 0: one process of its own
            runs = []
            for rep in range(REPS):
                redis.reset()
                crawl = f"b-{n}-{rep}"
                if n == 0:
                    cmds = [crawl_cmd(os.path.join(work, f"b-local-{rep}"), web.seeds, "100ms", LAT_CONC,
                                      limit=limit)]
                else:
                    cmds = [crawl_cmd(os.path.join(work, f"b-{n}-{rep}-w{i}"), web.seeds if i == 0 else None,
                                      "100ms", LAT_CONC, redis.url(), crawl, f"w{i}", limit=limit)
                            for i in range(n)]
                rcpu0, rusec0 = redis.cpu(), redis.command_usec()
                wall, cpu, pages = run_workers(cmds)
                rcpu, rusec = redis.cpu() - rcpu0, redis.command_usec() - rusec0
                runs.append({"wall": wall, "pages": pages, "cpu": cpu, "redis_cpu": rcpu, "redis_usec": rusec,
                             "requests": run_workers.requests})
                for c in cmds:
                    shutil.rmtree(c[c.index("--out") + 1], ignore_errors=True)
                print(f"B {n or 'local'} worker(s) rep {rep}: {pages} pages in {wall:.1f} s "
                      f"({pages / wall:.0f}/s), redis cpu {rcpu:.2f} s", flush=True)
            rows[n] = {
                "pages": statistics.median(r["pages"] for r in runs),
                "pages_per_s": statistics.median(r["pages"] / r["wall"] for r in runs),
                "cpu_us": statistics.median(r["cpu"] / r["pages"] * 1e6 for r in runs),
                "redis_us": statistics.median(r["redis_cpu"] / r["pages"] * 1e6 for r in runs),
                "redis_cmd_us": statistics.median(r["redis_usec"] / r["pages"] for r in runs),
                "requests": statistics.median(r["requests"] for r in runs),
            }
        gap = web.stop()["min_gap_ms"]
    except BaseException:
        web.stop()
        raise
    return rows, gap


def part_c(redis):
    redis.reset()
    out = subprocess.run([os.path.join(REL, "examples", "shared_memory"), "--redis", redis.url(),
                          "--urls", str(MEM_URLS), "--hosts", str(max(1, MEM_URLS // 100))],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def local_vs_worker_rows(rows):
    """Table rows of `local_vs_worker`'s result, each mode against the local run."""
    lines = []
    for (mode, delay), r in rows.items():
        ratio = r["pages_per_s"] / rows[("local", delay)]["pages_per_s"]
        lines.append(f"| {delay} | {mode} | {r['pages']:.0f} | {r['pages_per_s']:.0f} | {r['cpu_us']:.0f} "
                     f"| {r['redis_us']:.0f} | {ratio:.2f} |")
    return lines


def write_report(a, b, gap, mem, d):
    one = b[WORKERS[0]]["pages_per_s"] / WORKERS[0]
    lines = [
        BEGIN,
        f"Generated by `scripts/bench shared` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"redis-server {subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.split()[2]} "
        f"on the same machine, AOF on (fsync every second). Medians of {REPS} runs.",
        "",
        f"**A. One worker in Redis mode vs a crawl of its own** (bench_web standard profile, {HOSTS} hosts x {PAGES} pages, "
        "--concurrency 256):",
        "",
        "| delay | mode | pages | pages/s | trawl CPU us/page | Redis CPU us/page | Redis/local pages/s |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += local_vs_worker_rows(a)
    lines += [
        "",
        f"**B. Scaling with workers bound by latency** (every response {LAT_MS} ms late; {LAT_HOSTS} hosts x "
        f"{LAT_PAGES} pages, small profile, more than the runs finish; each worker --concurrency {LAT_CONC}, "
        f"--delay 100ms, --time-limit {LAT_SECONDS}s; pages/s over the whole wall time, start-up and stop included):",
        "",
        "| workers | pages | pages/s | / (N x one worker) | trawl CPU us/page | Redis CPU us/page | Redis command time us/page |",
        "|---|---|---|---|---|---|---|",
    ]
    r = b[0]
    lines.append(f"| one process of its own | {r['pages']:.0f} | {r['pages_per_s']:.0f} | {r['pages_per_s'] / one:.2f} "
                 f"| {r['cpu_us']:.0f} | - | - |")
    for n in WORKERS:
        r = b[n]
        lines.append(f"| {n} | {r['pages']:.0f} | {r['pages_per_s']:.0f} | {r['pages_per_s'] / (n * one):.2f} "
                     f"| {r['cpu_us']:.0f} | {r['redis_us']:.0f} | {r['redis_cmd_us']:.0f} |")
    local = b[0]
    lines += [
        "",
        f"The process of its own made {local['requests']:.0f} requests for its {local['pages']:.0f} pages: hosts "
        "under way go before hosts not opened yet (whose first request is their robots.txt), much as a worker "
        "goes deep in the at most 4 x --concurrency hosts it holds (until 2026-11-25 it served all hosts in turn "
        "and got 11 pages from 792 requests, nearly all robots.txt). The scaling goal is measured against one worker.",
        "",
        f"Smallest gap between two requests to one host over all runs of B (the server's log): {gap:.0f} ms "
        "(the delay is 100 ms).",
        "",
        f"**C. Redis memory** for {mem['urls']:,} queued URLs on {mem['hosts']:,} hosts (mean URL "
        f"{mem['mean_url_bytes']:.0f} bytes; seen set + queue): {mem['bytes_per_url']:.0f} bytes per URL "
        f"({mem['used_memory_delta'] / 2**20:.0f} MiB).",
        "",
        f"**D. Few hosts, no delay, bound by latency** (every response {FEW_MS} ms late; {FEW_HOSTS} hosts x "
        f"{FEW_PAGES} pages, small profile, --concurrency 256: each host is fetched one request at a time, so "
        "every wait for Redis between two batches of a host's URLs shows in the wall time):",
        "",
        "| delay | mode | pages | pages/s | trawl CPU us/page | Redis CPU us/page | Redis/local pages/s |",
        "|---|---|---|---|---|---|---|",
        *local_vs_worker_rows(d),
        END,
    ]
    write_block(OUT, "Shared crawl (Redis)", lines)


def alternating_crawls(work, web, variants, reps, around=None):
    """The same CPU-bound crawl of `web` (no delay, --concurrency 256) once per variant in each
    of `reps` repetitions, the variants alternating so the machine's drift hits all alike.
    `variants` maps a name to extra trawl arguments; `around(name)`, if given, returns a
    context manager held during that variant's crawl (a poller, say). Returns each variant's
    runs: pages/s, trawl's CPU us per page, pages. Shared by bench-order and bench-console."""
    runs = {name: [] for name in variants}
    for rep in range(reps):
        for name, extra in variants.items():
            out = os.path.join(work, f"{name.replace(' ', '_')}-{rep}")
            cmd = [os.path.join(REL, "trawl"), "crawl", "--seeds", web.seeds, "--out", out,
                   "--delay", "0ms", "--concurrency", "256", "--scope", "any", "-q",
                   "--stats", out + ".json"] + list(extra)
            with (around(name) if around else contextlib.nullcontext()):
                cpu0, t0 = children_cpu(), time.monotonic()
                p = subprocess.run(cmd, capture_output=True, text=True)
                wall, cpu = time.monotonic() - t0, children_cpu() - cpu0
            if p.returncode not in (0, 4):
                raise SystemExit(f"trawl failed: {p.stderr[-2000:]}")
            pages = json.load(open(out + ".json"))["pages_archived"]
            runs[name].append({"pps": pages / wall, "cpu_us": cpu / pages * 1e6, "pages": pages})
            print(f"{name} rep {rep}: {pages} pages, {pages / wall:.0f}/s, {cpu / pages * 1e6:.0f} us/page",
                  flush=True)
            shutil.rmtree(out, ignore_errors=True)
    return runs


def median_table(runs, first_column, baseline):
    """Markdown rows of the medians of `runs` (from alternating_crawls), with CPU per page as a
    ratio to the `baseline` variant."""
    med = {n: {k: statistics.median(r[k] for r in rs) for k in ["pps", "cpu_us", "pages"]}
           for n, rs in runs.items()}
    lines = [f"| {first_column} | pages | pages/s | CPU us/page | CPU vs {baseline} |", "|---|---|---|---|---|"]
    for n, r in med.items():
        lines.append(f"| {n} | {r['pages']:.0f} | {r['pps']:.0f} | {r['cpu_us']:.0f} | "
                     f"{r['cpu_us'] / med[baseline]['cpu_us']:.2f} |")
    return lines


def write_block(path, heading, lines):
    """Replaces the generated block (first and last of `lines` are its begin/end markers) in
    the document at `path`, or appends it under `heading`; prints it. Shared by the bench
    scripts that write docs/PERFORMANCE.md."""
    begin, end = lines[0], lines[-1]
    block = "\n".join(lines)
    doc = open(path).read()
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin)] + block + doc[doc.index(end) + len(end):]
    else:
        doc += f"\n## {heading}\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)
    print("\n" + block)


def main():
    work = tempfile.mkdtemp(prefix="bench-shared-")
    redis = RedisServer(work)
    try:
        mem = part_c(redis)
        print(f"C: {mem}", flush=True)
        d = part_d(work, redis)
        b, gap = part_b(work, redis)
        a = part_a(work, redis)
        write_report(a, b, gap, mem, d)
    finally:
        redis.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
