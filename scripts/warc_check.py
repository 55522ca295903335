#!/usr/bin/env python3
"""warc_check.py — owns the strict validation of trawl's .warc.gz output.

Usage (with the venv python from scripts/pyenv):
    warc_check.py [--json OUT] FILE_OR_DIR...

For a directory, every *.warc.gz directly inside it is checked (files still
being written, *.warc.gz.open, are ignored). Every problem is printed on
stderr as one line "FILE: offset N: message" and the exit status is 1; when
everything is fine a one-line "OK: ..." summary is printed and it exits 0.

What is checked, per file:
  * the file is a sequence of gzip members, one WARC record per member, with
    nothing after the last member; it is not empty;
  * WARC/1.1 header syntax: record id, UTC date, exact Content-Length, the
    CRLFCRLF after the block, bare target URIs, known record types;
  * the first record is a warcinfo (application/warc-fields) whose
    WARC-Filename is the file's own name;
  * WARC-Block-Digest (required on request/response/metadata) and
    WARC-Payload-Digest, recomputed here with hashlib. The payload of an HTTP
    message is its entity: the body after removing chunked transfer coding
    (done here, tolerating a cut-off last chunk when WARC-Truncated is set)
    but keeping any Content-Encoding. A message with other transfer codings
    (`gzip, chunked`, `chunked, chunked`) must state no WARC-Payload-Digest:
    readers disagree on what its payload is;
  * every request has a response in the same file linked by
    WARC-Concurrent-To, with the same WARC-Date and WARC-Target-URI;
    responses carry WARC-IP-Address (unless the warcinfo names a proxy);
  * revisit records use the WARC/1.1 identical-payload-digest profile;
  * warcio's ArchiveIterator reads every record and `warcio check` passes.
    warcio 1.8.1 hashes the still-chunked body as the "payload", so its
    "payload digest failed" on a chunked HTTP record whose entity digest was
    verified here is a known warcio bug and is not reported.

--json OUT writes a summary for the Rust integration tests: a list of
{"file", "records": [{type, target_uri, date, record_id, status,
content_type, payload_digest, truncated, offset, length,
http_headers_raw_chunked}]}.

No third-party dependency besides warcio.
"""

import argparse
import base64
import collections
import contextlib
import datetime
import hashlib
import io
import ipaddress
import json
import os
import re
import subprocess
import sys
import zlib

READ_SIZE = 1 << 20

RECORD_ID_RE = re.compile(
    r"^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}>$",
    re.IGNORECASE,
)
WARC_DATE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?Z$")
# The protocol name in any case and several spaces between the parts are as servers sent
# them; warcio and pywb read both (src/http_message/status_line.rs).
HTTP_STATUS_RE = re.compile(rb"^HTTP/\d\.\d +(\d{3})(?: .*)?$", re.IGNORECASE)
HTTP_REQUEST_RE = re.compile(rb"^[A-Z]+ \S+ HTTP/\d\.\d$")
CHUNK_SIZE_RE = re.compile(rb"^([0-9A-Fa-f]+)[ \t]*(?:;.*)?$")

RECORD_TYPES = {
    "warcinfo", "response", "resource", "request",
    "metadata", "revisit", "conversion", "continuation",
}
NEED_BLOCK_DIGEST = {"request", "response", "metadata"}
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
TRUNCATED_REASONS = {"length", "time", "disconnect", "unspecified"}
# WARC-Protocol (IIPC warc-specifications proposal #42, written by Common Crawl and Heritrix)
# names one protocol layer per field: "http/1.1" and then "tls/1.3" on one record.
REPEATABLE_FIELDS = {"warc-concurrent-to", "warc-protocol"}
# Its values are ALPN-style identifiers: lower case, no spaces.
PROTOCOL_VALUE = re.compile(r"^[a-z0-9][a-z0-9._/-]*$")
HTTP_RESPONSE_TYPE = "application/http;msgtype=response"
HTTP_REQUEST_TYPE = "application/http;msgtype=request"


# ---------------------------------------------------------------- data model

class Problems:
    """Collects problems as 'FILE: offset N: message' lines."""

    def __init__(self):
        self.lines = []

    def add(self, path, offset, message):
        where = path if offset is None else f"{path}: offset {offset}"
        # keep every problem on one printable line
        message = "".join(c if c.isprintable() else " " for c in message)
        self.lines.append(f"{where}: {' '.join(message.split())}")


class HttpMessage:
    """An HTTP request or response parsed out of a WARC block."""

    def __init__(self, start_line, headers, body):
        self.start_line = start_line  # bytes, without CRLF
        self.headers = headers        # list of (lower-case name, value) str
        self.body = body              # bytes as stored (maybe still chunked)

    def get(self, name):
        for key, value in self.headers:
            if key == name:
                return value
        return None

    def get_all(self, name):
        return [value for key, value in self.headers if key == name]

    def transfer_codings(self):
        codings = []
        for value in self.get_all("transfer-encoding"):
            codings += [c.strip().lower() for c in value.split(",") if c.strip()]
        return codings

    def is_chunked(self):
        return "chunked" in self.transfer_codings()

    def status(self):
        match = HTTP_STATUS_RE.match(self.start_line)
        return int(match.group(1)) if match else None


class Record:
    """One WARC record as found in one gzip member."""

    def __init__(self, offset, length):
        self.offset = offset      # offset of the gzip member in the file
        self.length = length      # compressed length of the gzip member
        self.version = None
        self.fields = []          # list of (name, value) as written
        self.block = b""
        self.well_formed = False  # header + block + CRLFCRLF parsed cleanly
        self.http = None          # HttpMessage for application/http blocks
        self.entity = None        # HTTP payload with transfer coding removed
        self.other_coding = None  # transfer codings other than one chunked, if any

    def get(self, name):
        name = name.lower()
        for key, value in self.fields:
            if key.lower() == name:
                return value
        return None

    def get_all(self, name):
        name = name.lower()
        return [value for key, value in self.fields if key.lower() == name]

    @property
    def type(self):
        return self.get("WARC-Type")

    @property
    def record_id(self):
        return self.get("WARC-Record-ID")

    def http_kind(self):
        """'response' / 'request' when the block is an HTTP message, else None."""
        content_type = (self.get("Content-Type") or "").replace(" ", "").lower()
        if content_type == HTTP_RESPONSE_TYPE:
            return "response"
        if content_type == HTTP_REQUEST_TYPE:
            return "request"
        return None


# ---------------------------------------------------------------- helpers

def sha1_digest(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def find_warc_files(paths, problems):
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(
                os.path.join(path, name)
                for name in os.listdir(path)
                if name.endswith(".warc.gz") and os.path.isfile(os.path.join(path, name))
            )
            if not found:
                problems.add(path, None, "directory contains no *.warc.gz files")
            files += found
        elif os.path.isfile(path):
            if not path.endswith(".warc.gz"):
                problems.add(path, None, "not a .warc.gz file")
            files.append(path)
        else:
            problems.add(path, None, "no such file or directory")
    return files


def valid_warc_date(value):
    match = WARC_DATE_RE.match(value or "")
    if not match:
        return False
    try:
        datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- gzip layer

def iter_gzip_members(path, problems):
    """Yield (offset, compressed_length, data) for each gzip member of a file.

    Stops (after recording a problem) at a corrupt or truncated member or at
    trailing bytes that are not a gzip member.
    """
    with open(path, "rb") as f:
        offset = 0
        pending = f.read(READ_SIZE)
        if not pending:
            problems.add(path, None, "file is empty")
            return
        while pending:
            inflater = zlib.decompressobj(31)
            out = []
            consumed = 0
            while True:
                try:
                    out.append(inflater.decompress(pending))
                except zlib.error as err:
                    what = "trailing garbage after last gzip member" if offset else "not gzip data"
                    problems.add(path, offset, f"{what} ({err})")
                    return
                if inflater.eof:
                    consumed += len(pending) - len(inflater.unused_data)
                    pending = inflater.unused_data
                    break
                consumed += len(pending)
                pending = f.read(READ_SIZE)
                if not pending:
                    problems.add(path, offset, "truncated gzip member (file ends inside it)")
                    return
            yield offset, consumed, b"".join(out)
            offset += consumed
            if not pending:
                pending = f.read(READ_SIZE)


# ---------------------------------------------------------------- WARC layer

def parse_record(path, offset, length, data, problems):
    """Parse one decompressed gzip member; it must hold exactly one record."""
    rec = Record(offset, length)
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        problems.add(path, offset, "no CRLFCRLF ending the WARC header block")
        return rec
    try:
        lines = data[:head_end].decode("utf-8").split("\r\n")
    except UnicodeDecodeError:
        problems.add(path, offset, "WARC header block is not valid UTF-8")
        return rec

    rec.version = lines[0]
    if rec.version != "WARC/1.1":
        problems.add(path, offset, f"first line is {rec.version[:40]!r}, expected 'WARC/1.1'")
    ok = parse_header_fields(path, offset, lines[1:], rec, problems)

    length_value = rec.get("Content-Length")
    if length_value is None or not length_value.isdigit():
        problems.add(path, offset, f"missing or invalid Content-Length {length_value!r}")
        return rec
    block_start = head_end + 4
    block_end = block_start + int(length_value)
    rec.block = data[block_start:block_end]
    tail = data[block_end:]
    if block_end > len(data):
        problems.add(path, offset,
                     f"Content-Length {length_value} exceeds the {len(data) - block_start} "
                     "bytes left in the gzip member")
        return rec
    if tail != b"\r\n\r\n":
        if tail.startswith(b"\r\n\r\nWARC/"):
            problems.add(path, offset,
                         "gzip member holds more than one record "
                         "(each record must be its own gzip member)")
        else:
            problems.add(path, offset,
                         f"block is not followed by exactly CRLFCRLF (got {tail[:12]!r}, "
                         f"{len(tail)} bytes); Content-Length {length_value} is wrong?")
        return rec
    rec.well_formed = ok
    return rec


def parse_header_fields(path, offset, lines, rec, problems):
    ok = True
    seen = set()
    for line in lines:
        if "\n" in line or "\r" in line:
            problems.add(path, offset, f"bare CR or LF in WARC header line {line[:60]!r}")
            ok = False
            continue
        if line[:1] in (" ", "\t") and rec.fields:
            name, value = rec.fields[-1]
            rec.fields[-1] = (name, value + " " + line.strip())
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            problems.add(path, offset, f"malformed WARC header line {line[:60]!r}")
            ok = False
            continue
        key = name.lower()
        if key in seen and key not in REPEATABLE_FIELDS:
            problems.add(path, offset, f"duplicate WARC header {name}")
            ok = False
        seen.add(key)
        if key == "warc-protocol" and not PROTOCOL_VALUE.match(value.strip()):
            problems.add(path, offset, f"WARC-Protocol {value.strip()!r} is not a protocol id")
            ok = False
        rec.fields.append((name, value.strip()))
    return ok


def check_record_headers(path, rec, problems):
    at = rec.offset
    for name in ("WARC-Type", "WARC-Record-ID", "WARC-Date", "Content-Length"):
        if rec.get(name) is None:
            problems.add(path, at, f"missing mandatory header {name}")
    if rec.type is not None and rec.type not in RECORD_TYPES:
        problems.add(path, at, f"unknown WARC-Type {rec.type!r}")
    if rec.record_id is not None and not RECORD_ID_RE.match(rec.record_id):
        problems.add(path, at, f"WARC-Record-ID {rec.record_id!r} is not <urn:uuid:...>")
    for other in rec.get_all("WARC-Concurrent-To"):
        if not RECORD_ID_RE.match(other):
            problems.add(path, at, f"WARC-Concurrent-To {other!r} is not <urn:uuid:...>")
    date = rec.get("WARC-Date")
    if date is not None and not valid_warc_date(date):
        problems.add(path, at, f"WARC-Date {date!r} is not UTC YYYY-MM-DDThh:mm:ss[.f]Z")

    uri = rec.get("WARC-Target-URI")
    if uri is not None:
        if uri.startswith("<") or uri.endswith(">"):
            problems.add(path, at, f"WARC-Target-URI {uri!r} must not be wrapped in <>")
        elif not uri or any(c.isspace() for c in uri):
            problems.add(path, at, f"WARC-Target-URI {uri!r} is empty or contains whitespace")
    elif rec.type in ("request", "response", "revisit", "resource"):
        problems.add(path, at, f"{rec.type} record has no WARC-Target-URI")

    if rec.block and rec.get("Content-Type") is None:
        problems.add(path, at, "non-empty block without Content-Type")
    truncated = rec.get("WARC-Truncated")
    if truncated is not None and truncated not in TRUNCATED_REASONS:
        problems.add(path, at, f"WARC-Truncated {truncated!r} is not one of {sorted(TRUNCATED_REASONS)}")
    ip = rec.get("WARC-IP-Address")
    if ip is not None:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            problems.add(path, at, f"WARC-IP-Address {ip!r} is not an IP address")
    if rec.type == "revisit":
        check_revisit_headers(path, rec, problems)


def check_revisit_headers(path, rec, problems):
    profile = rec.get("WARC-Profile")
    if profile != REVISIT_PROFILE:
        problems.add(path, rec.offset, f"revisit WARC-Profile {profile!r}, expected {REVISIT_PROFILE}")
    for name in ("WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Payload-Digest"):
        if rec.get(name) is None:
            problems.add(path, rec.offset, f"revisit record without {name}")
    refers_date = rec.get("WARC-Refers-To-Date")
    if refers_date is not None and not valid_warc_date(refers_date):
        problems.add(path, rec.offset, f"WARC-Refers-To-Date {refers_date!r} is not a UTC WARC date")


def check_warcinfo_first(path, records, problems):
    first = records[0]
    if first.type != "warcinfo":
        problems.add(path, first.offset, f"first record is {first.type!r}, expected 'warcinfo'")
        return
    content_type = first.get("Content-Type")
    if content_type != "application/warc-fields":
        problems.add(path, first.offset,
                     f"warcinfo Content-Type {content_type!r}, expected 'application/warc-fields'")
    filename = first.get("WARC-Filename")
    if filename != os.path.basename(path):
        problems.add(path, first.offset,
                     f"warcinfo WARC-Filename {filename!r} != file name {os.path.basename(path)!r}")


# ---------------------------------------------------------------- HTTP layer

# The end of an HTTP head: an empty line, its line ends CRLF or a bare LF (RFC 9112 section 2.2
# lets a recipient take a lone LF as a line end; some servers send nothing else, and the record
# holds their bytes as received).
HTTP_HEAD_END_RE = re.compile(rb"\n\r?\n")
# A header field line: a token, optional whitespace, a colon (RFC 9112 section 5.1; the space
# before the colon is what Chromium and trawl accept in a response).
HTTP_FIELD_RE = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:(.*)$", re.S)


def parse_http(block):
    """Split an application/http block into an HttpMessage, or return an error string.

    Read as trawl, Chromium and warcio read a response: a line that is not a header field (no
    colon, a space inside the name) is left out, not an error; the block keeps it."""
    end = HTTP_HEAD_END_RE.search(block)
    if end is None:
        return None, "HTTP header block not terminated by an empty line"
    lines = [line[:-1] if line.endswith(b"\r") else line for line in block[:end.start()].split(b"\n")]
    headers = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + " " + line.strip().decode("latin-1"))
            continue
        field = HTTP_FIELD_RE.match(line)
        if field is None:
            continue
        headers.append((field.group(1).decode("latin-1").lower(),
                        field.group(2).strip().decode("latin-1")))
    return HttpMessage(lines[0], headers, block[end.end():]), None


def _line(body, pos):
    """The line at pos without its end (LF or CRLF) and where the next starts, or None."""
    lf = body.find(b"\n", pos)
    if lf < 0:
        return None
    line = body[pos:lf]
    return (line[:-1] if line.endswith(b"\r") else line), lf + 1


def dechunk(body, truncated):
    """Remove chunked transfer coding. Returns (entity, error or None).

    Lines may end in a bare LF, as trawl, warcio and browsers read them.
    With truncated=True a body that stops early (inside a chunk, a size line,
    or before the last-chunk) is accepted and its data so far is the entity;
    so is a body whose framing breaks (a server's bad size line): the writer
    stored the bytes as received, marked the record truncated, and digested
    the entity recovered up to the break.
    """
    entity = bytearray()
    pos = 0
    while True:
        found = _line(body, pos)
        if found is None:
            return bytes(entity), None if truncated else f"chunk size line missing at body offset {pos}"
        line, next_pos = found
        match = CHUNK_SIZE_RE.match(line)
        if not match:
            if truncated:
                return bytes(entity), None
            return bytes(entity), f"bad chunk size line {line[:40]!r} at body offset {pos}"
        size = int(match.group(1), 16)
        pos = next_pos
        if size == 0:
            break
        data = body[pos:pos + size]
        entity += data
        if len(data) < size:
            return bytes(entity), None if truncated else f"chunk of {size} bytes cut short at body offset {pos}"
        pos += size
        if body[pos:pos + 2] == b"\r\n":
            pos += 2
        elif body[pos:pos + 1] == b"\n":
            pos += 1
        elif truncated:
            return bytes(entity), None
        else:
            return bytes(entity), f"chunk data not followed by CRLF at body offset {pos}"
    # trailer fields, then the final empty line
    while True:
        found = _line(body, pos)
        if found is None:
            return bytes(entity), None if truncated else "chunked body ends without final CRLF"
        line, pos = found
        if not line:
            break
    if pos != len(body):
        return bytes(entity), f"{len(body) - pos} bytes after the last chunk"
    return bytes(entity), None


def analyse_http(path, rec, problems):
    """Parse an application/http block and compute its entity (payload)."""
    kind = rec.http_kind()
    if kind is None or not rec.block:
        return
    http, error = parse_http(rec.block)
    if error:
        problems.add(path, rec.offset, error)
        return
    rec.http = http
    if kind == "response" and http.status() is None:
        problems.add(path, rec.offset, f"bad HTTP status line {http.start_line[:60]!r}")
    if kind == "request" and not HTTP_REQUEST_RE.match(http.start_line):
        problems.add(path, rec.offset, f"bad HTTP request line {http.start_line[:60]!r}")
    if rec.type == "revisit":
        return  # header-only block: its payload is the earlier capture's
    codings = [c for c in http.transfer_codings() if c != "identity"]
    if codings and codings != ["chunked"]:
        # `gzip, chunked`, `chunked, chunked`, `x-chunked`: readers disagree on the payload
        # (warcio removes no coding, RFC 9112 all of them), so no digest of it is checked;
        # check_digests wants none stated.
        rec.other_coding = codings
        return
    if http.is_chunked():
        truncated = rec.get("WARC-Truncated") is not None
        rec.entity, error = dechunk(http.body, truncated)
        if error:
            problems.add(path, rec.offset, f"chunked body: {error}")
            rec.entity = None
    else:
        rec.entity = http.body


def check_digests(path, rec, problems):
    """Recompute WARC-Block-Digest and WARC-Payload-Digest."""
    at = rec.offset
    block_digest = rec.get("WARC-Block-Digest")
    if block_digest is None:
        if rec.type in NEED_BLOCK_DIGEST:
            problems.add(path, at, f"{rec.type} record without WARC-Block-Digest")
    elif block_digest != sha1_digest(rec.block):
        problems.add(path, at, f"WARC-Block-Digest {block_digest} != computed {sha1_digest(rec.block)}")

    payload_digest = rec.get("WARC-Payload-Digest")
    if rec.type == "revisit":
        return  # refers to the earlier capture's payload
    if rec.http_kind() is not None and rec.type in ("response", "request"):
        if rec.other_coding is not None:
            if payload_digest is not None:
                problems.add(path, at, f"WARC-Payload-Digest stated over Transfer-Encoding "
                             f"{rec.other_coding}, whose payload readers do not agree on")
            return
        if payload_digest is None:
            if rec.type == "response":
                problems.add(path, at, "HTTP response record without WARC-Payload-Digest")
            return
        if rec.entity is None:
            return  # the HTTP problem was already reported
        expected = sha1_digest(rec.entity)
        if payload_digest != expected:
            how = "de-chunked entity" if rec.http.is_chunked() else "entity"
            problems.add(path, at, f"WARC-Payload-Digest {payload_digest} != computed {expected} ({how})")
    elif payload_digest is not None and payload_digest != sha1_digest(rec.block):
        problems.add(path, at, f"WARC-Payload-Digest {payload_digest} != computed {sha1_digest(rec.block)}")


def check_request_pairs(path, records, problems):
    """Every request must have a concurrent response (or revisit) with the same date and URI."""
    by_id = {rec.record_id: rec for rec in records if rec.record_id}
    pointing_at = collections.defaultdict(set)  # record id -> ids of records naming it
    for rec in records:
        for other in rec.get_all("WARC-Concurrent-To"):
            pointing_at[other].add(rec.record_id)
    for req in records:
        if req.type != "request":
            continue
        linked = {i for i in req.get_all("WARC-Concurrent-To") if i in by_id}
        linked |= pointing_at[req.record_id] - {None}
        responses = [by_id[i] for i in sorted(linked) if by_id[i].type in ("response", "revisit")]
        if not responses:
            problems.add(path, req.offset,
                         f"request {req.record_id} has no response linked by WARC-Concurrent-To in this file")
            continue
        for resp in responses:
            for name in ("WARC-Date", "WARC-Target-URI"):
                if req.get(name) != resp.get(name):
                    problems.add(path, req.offset,
                                 f"request {name} {req.get(name)!r} != {resp.get(name)!r} "
                                 f"of its response at offset {resp.offset}")


# ---------------------------------------------------------------- warcio

def check_with_warcio_iterator(path, records, problems):
    """warcio must read the same records at the same offsets without complaint."""
    from warcio.archiveiterator import ArchiveIterator

    noise = io.StringIO()
    offsets = []
    try:
        with open(path, "rb") as f, contextlib.redirect_stderr(noise):
            iterator = ArchiveIterator(f)
            for record in iterator:
                offsets.append(iterator.get_record_offset())
                while record.raw_stream.read(READ_SIZE):
                    pass
            errors = iterator.err_count
    except Exception as err:  # warcio raises several exception types
        message = " ".join(str(err).split())
        where = f" after the record at offset {offsets[-1]}" if offsets else ""
        problems.add(path, None,
                     f"warcio ArchiveIterator failed{where}: {type(err).__name__}: {message[:200]}")
        return
    if errors:
        problems.add(path, None, f"warcio ArchiveIterator warned: {' '.join(noise.getvalue().split())[:200]}")
    expected = [rec.offset for rec in records]
    if offsets != expected:
        problems.add(path, None, f"warcio found records at offsets {offsets[:10]}, expected {expected[:10]}")


def warcio_command():
    """The venv's `warcio` entry point, or the same via the running python."""
    candidate = os.path.join(os.path.dirname(sys.executable), "warcio")
    if os.access(candidate, os.X_OK):
        return [candidate]
    return [sys.executable, "-c", "import sys; from warcio.cli import main; main(sys.argv[1:])"]


def parse_warcio_check_output(text):
    """Map record offset -> list of problem lines from `warcio check` output.

    Record problems are indented under "offset N WARC-Record-ID ..."; a
    file-level exception is a multi-line message, joined here into one line
    under the offset None.
    """
    found = collections.defaultdict(list)
    file_level = []
    offset = None
    for line in text.splitlines():
        match = re.match(r"^\s+offset (\d+) WARC-Record-ID", line)
        if match:
            offset = int(match.group(1))
        elif offset is not None and line.startswith("    ") and line.strip():
            found[offset].append(line.strip())
        elif line.startswith(" ") and line.strip():
            file_level.append(line.strip())
            offset = None
    if file_level:
        found[None].append(" ".join(file_level)[:300])
    return found


def run_warcio_check(path, records, problems):
    """Run `warcio check`; forgive only its known chunked-payload mistake."""
    result = subprocess.run(warcio_command() + ["check", path],
                            capture_output=True, text=True, check=False)
    if result.returncode == 0:
        return
    by_offset = {rec.offset: rec for rec in records}
    parsed = parse_warcio_check_output(result.stdout)
    for offset, messages in parsed.items():
        for message in messages:
            if not known_warcio_chunked_bug(by_offset.get(offset), message):
                problems.add(path, offset, f"warcio check: {message}")
    if not parsed:
        detail = " ".join((result.stdout + result.stderr).split())[:300]
        problems.add(path, None, f"warcio check exited {result.returncode}: {detail}")


def known_warcio_chunked_bug(rec, message):
    """warcio digests the raw chunked body; we verified the de-chunked entity."""
    return (
        rec is not None
        and message.startswith("payload digest failed")
        and rec.http is not None
        and rec.http.is_chunked()
        and rec.entity is not None
        and rec.get("WARC-Payload-Digest") == sha1_digest(rec.entity)
    )


# ---------------------------------------------------------------- summary

def record_summary(rec):
    status = content_type = None
    if rec.http is not None and rec.type in ("response", "revisit"):
        status = rec.http.status()
        content_type = rec.http.get("content-type")
    return {
        "type": rec.type,
        "target_uri": rec.get("WARC-Target-URI"),
        "date": rec.get("WARC-Date"),
        "record_id": rec.record_id,
        "status": status,
        "content_type": content_type,
        "payload_digest": rec.get("WARC-Payload-Digest"),
        "truncated": rec.get("WARC-Truncated"),
        "offset": rec.offset,
        "length": rec.length,
        "http_headers_raw_chunked": bool(rec.http is not None and rec.http.is_chunked()),
    }


# ---------------------------------------------------------------- driver

def check_ip_addresses(path, records, problems):
    """Every response has WARC-IP-Address, unless the file's warcinfo names a proxy (one
    that resolves names leaves the address unknown to the crawler)."""
    info = records[0]
    if info.type == "warcinfo" and re.search(rb"(?m)^proxy:", info.block or b""):
        return
    for rec in records:
        if rec.type == "response" and rec.get("WARC-IP-Address") is None:
            problems.add(path, rec.offset, "response record without WARC-IP-Address")


def check_file(path, problems, seen_ids):
    """Run every check on one file; returns its records."""
    records = []
    for offset, length, data in iter_gzip_members(path, problems):
        rec = parse_record(path, offset, length, data, problems)
        records.append(rec)
        if rec.version is None:
            continue
        check_record_headers(path, rec, problems)
        if rec.record_id in seen_ids:
            problems.add(path, offset, f"WARC-Record-ID {rec.record_id} used twice (also at {seen_ids[rec.record_id]})")
        elif rec.record_id:
            seen_ids[rec.record_id] = f"{os.path.basename(path)} offset {offset}"
        if rec.well_formed:
            analyse_http(path, rec, problems)
            check_digests(path, rec, problems)
    if not records:
        return records
    check_warcinfo_first(path, records, problems)
    check_ip_addresses(path, records, problems)
    check_request_pairs(path, records, problems)
    check_with_warcio_iterator(path, records, problems)
    run_warcio_check(path, records, problems)
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description="Strictly check trawl's .warc.gz files.")
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    parser.add_argument("--json", metavar="OUT", help="write a JSON summary of every record")
    args = parser.parse_args(argv)

    problems = Problems()
    seen_ids = {}
    summary = []
    counts = collections.Counter()
    files = find_warc_files(args.paths, problems)
    for path in files:
        records = check_file(path, problems, seen_ids)
        counts.update(rec.type or "?" for rec in records)
        summary.append({"file": path, "records": [record_summary(rec) for rec in records]})

    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(summary, out, indent=2)
            out.write("\n")

    for line in problems.lines:
        print(line, file=sys.stderr)
    if problems.lines or not files:
        print(f"FAILED: {len(problems.lines)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return 1
    by_type = ", ".join(f"{name}={n}" for name, n in sorted(counts.items()))
    print(f"OK: {len(files)} file(s), {sum(counts.values())} records ({by_type})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
