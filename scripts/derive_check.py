#!/usr/bin/env python3
"""scripts/derive_check.py: owns the third-party check of WET/WAT files written by trawl.

Usage: derive_check.py WARC_DIR DERIVED_DIR

Reads every X.warc.gz of WARC_DIR with warcio, and its X.warc.wet.gz and X.warc.wat.gz in
DERIVED_DIR with two readers, warcio and FastWARC. Checks: each derivative opens with a
warcinfo record; every WET record is a `conversion` record, text/plain, whose WARC-Refers-To
names a response of the WARC with the same WARC-Target-URI and whose WARC-Block-Digest is the
SHA-1 of its block; every WAT record is a `metadata` record of JSON whose WARC-Refers-To names a
record of the WARC, one WAT record per WARC record, with Container.Offset equal to the record's
offset and Envelope.WARC-Header-Metadata.WARC-Record-ID equal to WARC-Refers-To; both readers
see the same records. Prints one JSON object: {"errors": [...], "wet": {uri: {"text", "lang"}},
"wat": {uri: json of the response's WAT record}, "counts": {...}}.
"""

import base64
import hashlib
import json
import os
import sys

from fastwarc.warc import ArchiveIterator as FastIterator
from warcio.archiveiterator import ArchiveIterator


def sha1(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def warcio_records(path):
    out = []
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        for rec in it:
            body = rec.content_stream().read()
            out.append({
                "type": rec.rec_type,
                "headers": dict(rec.rec_headers.headers),
                "body": body,
                "offset": it.get_record_offset(),
            })
    return out


def fastwarc_records(path):
    out = []
    with open(path, "rb") as f:
        for rec in FastIterator(f, parse_http=False):
            out.append({"type": rec.headers.get("WARC-Type"), "id": rec.record_id,
                        "body": rec.reader.read()})
    return out


def main():
    warc_dir, derived_dir = sys.argv[1], sys.argv[2]
    errors, wet, wat = [], {}, {}
    counts = {"warc_records": 0, "wet_records": 0, "wat_records": 0}
    for name in sorted(os.listdir(warc_dir)):
        if not name.endswith(".warc.gz"):
            continue
        source = warcio_records(os.path.join(warc_dir, name))
        counts["warc_records"] += len(source)
        by_id = {r["headers"].get("WARC-Record-ID"): r for r in source}
        for kind in ["wet", "wat"]:
            path = os.path.join(derived_dir, name[:-3] + f".{kind}.gz")
            if not os.path.exists(path):
                errors.append(f"{name}: no {kind} file")
                continue
            recs = warcio_records(path)
            fast = fastwarc_records(path)
            if [(r["type"], r["body"]) for r in recs] != [(r["type"], r["body"]) for r in fast]:
                errors.append(f"{path}: warcio and FastWARC disagree")
            if not recs or recs[0]["type"] != "warcinfo":
                errors.append(f"{path}: does not open with warcinfo")
                continue
            refs = []
            for r in recs[1:]:
                h = r["headers"]
                ref = h.get("WARC-Refers-To")
                refs.append(ref)
                target = by_id.get(ref)
                if target is None:
                    errors.append(f"{path}: WARC-Refers-To {ref} is not a record of {name}")
                    continue
                if kind == "wet":
                    counts["wet_records"] += 1
                    if r["type"] != "conversion" or h.get("Content-Type") != "text/plain":
                        errors.append(f"{path}: {r['type']} {h.get('Content-Type')} in WET")
                    if target["type"] != "response":
                        errors.append(f"{path}: WET refers to a {target['type']} record")
                    if h.get("WARC-Target-URI") != target["headers"].get("WARC-Target-URI"):
                        errors.append(f"{path}: WET target differs from its response's")
                    if h.get("WARC-Block-Digest") != sha1(r["body"]):
                        errors.append(f"{path}: WET block digest wrong for {h.get('WARC-Target-URI')}")
                    wet[h.get("WARC-Target-URI")] = {
                        "text": r["body"].decode("utf-8"),
                        "lang": h.get("WARC-Identified-Content-Language"),
                        "truncated": h.get("WARC-Truncated"),
                    }
                else:
                    counts["wat_records"] += 1
                    if r["type"] != "metadata" or h.get("Content-Type") != "application/json":
                        errors.append(f"{path}: {r['type']} {h.get('Content-Type')} in WAT")
                    doc = json.loads(r["body"])
                    env = doc["Envelope"]
                    if env["WARC-Header-Metadata"].get("WARC-Record-ID") != ref:
                        errors.append(f"{path}: envelope record id differs from WARC-Refers-To")
                    if doc["Container"]["Offset"] != str(target["offset"]):
                        errors.append(f"{path}: Container.Offset {doc['Container']['Offset']} "
                                      f"!= {target['offset']}")
                    if doc["Container"]["Filename"] != name:
                        errors.append(f"{path}: Container.Filename {doc['Container']['Filename']}")
                    if target["type"] == "response":
                        wat[target["headers"].get("WARC-Target-URI")] = doc
            if kind == "wat" and sorted(refs) != sorted(by_id):
                errors.append(f"{path}: {len(refs)} WAT records for {len(by_id)} WARC records")
            if len(set(refs)) != len(refs):
                errors.append(f"{path}: a record is described twice")
    print(json.dumps({"errors": errors, "wet": wet, "wat": wat, "counts": counts}))


if __name__ == "__main__":
    main()
