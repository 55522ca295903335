#!/usr/bin/env python3
"""scripts/compare_wget.py: owns the comparison of two crawls' WARCs by what they archived;
run it through scripts/compare-wget, which makes the crawls.

Usage: compare_wget.py WGET_WARC_DIR TRAWL_WARC_DIR

Reads every response and revisit record of each directory with warcio and compares the
target URIs (angle brackets, which wget's WARC/1.0 writes, removed): prints both counts, the
URLs only one side archived, with status and content type, and the URLs both archived with
different statuses. Exits 0 (the lists are for reading, not a pass/fail).
"""

import glob
import os
import sys

from warcio.archiveiterator import ArchiveIterator


def archived(directory):
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "**", "*.warc*"), recursive=True)):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type not in ("response", "revisit"):
                    continue
                uri = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<>")
                head = record.http_headers
                status = head.get_statuscode() if head else "-"
                kind = (head.get_header("Content-Type") or "-").split(";")[0] if head else "-"
                found[uri] = (status, kind)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    wget, trawl = archived(sys.argv[1]), archived(sys.argv[2])
    print(f"archived: wget {len(wget)} URLs, trawl {len(trawl)}, both {len(wget.keys() & trawl.keys())}")
    for label, ours, theirs in (("only wget", wget, trawl), ("only trawl", trawl, wget)):
        only = sorted(ours.keys() - theirs.keys())
        print(f"{label}: {len(only)}")
        for uri in only:
            status, kind = ours[uri]
            print(f"  {status} {kind} {uri}")
    differ = sorted(u for u in wget.keys() & trawl.keys() if wget[u][0] != trawl[u][0])
    print(f"both, another status: {len(differ)}")
    for uri in differ:
        print(f"  wget {wget[uri][0]}, trawl {trawl[uri][0]}: {uri}")


if __name__ == "__main__":
    main()
