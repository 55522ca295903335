#!/usr/bin/env python3
"""scripts/benchmarks/link_farm.py — a loopback web whose pages are nothing but new links, used by
scripts/bench state --crawl to fill trawl's frontier with millions of queued URLs in a real
crawl.

One socket on 0.0.0.0:PORT answers for every host 127.0.X.Y (all loopback). Page /p/N on any host
links to LINKS never-seen URLs /p/M spread over HOSTS hosts (a tree: page N's children are
N*LINKS+1 .. N*LINKS+LINKS), so every link is new. robots.txt is 404.

Usage: link_farm.py PORT HOSTS LINKS SEEDS_OUT   (prints "ready" when listening)
"""
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    port, hosts, links, seeds_out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

    def host(i):
        return f"127.0.{1 + i // 250}.{1 + i % 250}"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            if not self.path.startswith("/p/"):
                body = b"not found"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
            else:
                try:
                    n = int(self.path[3:])
                except ValueError:
                    n = 0
                first = n * links + 1
                parts = ["<!doctype html><html><body>"]
                for m in range(first, first + links):
                    parts.append(f'<a href="http://{host(m % hosts)}:{port}/p/{m}">{m}</a>\n')
                parts.append("</body></html>")
                body = "".join(parts).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET

    server = Server(("0.0.0.0", port), Handler)
    with open(seeds_out, "w") as f:
        for i in range(hosts):
            f.write(f"http://{host(i)}:{port}/p/{i}\n")
    print("ready", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # runs until stdin closes


if __name__ == "__main__":
    main()
