#!/usr/bin/env python3
"""test_warc_check.py — owns the self-test of scripts/warc_check.py.

Run with the venv python (scripts/pyenv):  .venv/bin/python scripts/test_warc_check.py

Builds small WARC files byte by byte in a temp dir — one good file (with a
chunked, gzip-encoded response, a truncated chunked response and a revisit)
and many broken variants — and asserts that warc_check.py accepts the good
one and rejects each bad one with a message naming the problem. A few tests
also replay the good file through scripts/pywb_replay.py.

The good file is written by hand rather than with warcio's WARCWriter because
warcio 1.8.1 computes WARC-Payload-Digest over the still-chunked body, which
is wrong (the payload is the entity after removing the transfer coding).
"""

import base64
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "warc_check.py")
DATE = "2024-05-01T12:00:00Z"
PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


# ---------------------------------------------------------------- builders

def sha1(data):
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def new_id():
    return f"<urn:uuid:{uuid.uuid4()}>"


def chunked(data, sizes):
    """Chunk-encode data into pieces of the given sizes (last piece takes the rest)."""
    out, pos = b"", 0
    for size in sizes + [len(data)]:
        piece = data[pos:pos + size]
        if piece:
            out += b"%x\r\n" % len(piece) + piece + b"\r\n"
        pos += len(piece)
    return out + b"0\r\n\r\n"


def record(fields, block, content_length=None):
    """Raw bytes of one WARC/1.1 record (uncompressed)."""
    length = len(block) if content_length is None else content_length
    head = "WARC/1.1\r\n"
    for name, value in fields:
        head += f"{name}: {value}\r\n"
    head += f"Content-Length: {length}\r\n\r\n"
    return head.encode() + block + b"\r\n\r\n"


def warcinfo(filename):
    block = b"software: trawl-selftest\r\nformat: WARC File Format 1.1\r\n"
    return record([
        ("WARC-Type", "warcinfo"),
        ("WARC-Record-ID", new_id()),
        ("WARC-Date", DATE),
        ("WARC-Filename", filename),
        ("Content-Type", "application/warc-fields"),
        ("WARC-Block-Digest", sha1(block)),
    ], block)


def exchange(uri, http_response, payload_digest, extra=(), content_type_sep="; ",
             content_length=None):
    """A request record and its response record, linked by WARC-Concurrent-To (the response
    without WARC-Payload-Digest when payload_digest is None)."""
    req_id, resp_id = new_id(), new_id()
    path = "/" + uri.split("/", 3)[3]
    req_block = f"GET {path} HTTP/1.1\r\nHost: example.test\r\nUser-Agent: trawl\r\n\r\n".encode()
    request = record([
        ("WARC-Type", "request"),
        ("WARC-Record-ID", req_id),
        ("WARC-Date", DATE),
        ("WARC-Target-URI", uri),
        ("WARC-Concurrent-To", resp_id),
        ("Content-Type", "application/http; msgtype=request"),
        ("WARC-Block-Digest", sha1(req_block)),
        ("WARC-Payload-Digest", sha1(b"")),
    ], req_block)
    response = record([
        ("WARC-Type", "response"),
        ("WARC-Record-ID", resp_id),
        ("WARC-Date", DATE),
        ("WARC-Target-URI", uri),
        ("WARC-IP-Address", "127.0.0.1"),
        ("WARC-Concurrent-To", req_id),
        ("Content-Type", f"application/http{content_type_sep}msgtype=response"),
        ("WARC-Block-Digest", sha1(http_response)),
        *([("WARC-Payload-Digest", payload_digest)] if payload_digest is not None else []),
        *extra,
    ], http_response, content_length)
    return [request, response]


ENTITY = gzip.compress(
    b"<html><body><ul>"
    + b"".join(b"<li>hello library book %d %s</li>" % (i, hashlib.md5(b"%d" % i).hexdigest().encode())
               for i in range(100))
    + b"</ul></body></html>",
    mtime=0,
)
CHUNKED_BODY = chunked(ENTITY, [100, 7, 1000])
CHUNKED_RESPONSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"Content-Type: text/html; charset=utf-8\r\n"
    b"Content-Encoding: gzip\r\n"
    b"transfer-encoding: chunked\r\n\r\n" + CHUNKED_BODY
)
PLAIN_BODY = b"User-agent: *\nDisallow: /private/\n"
PLAIN_RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
    b"Content-Length: %d\r\n\r\n" % len(PLAIN_BODY) + PLAIN_BODY
)
# Cut off inside the second chunk: only the first chunk and 3 bytes survive.
TRUNCATED_BODY = CHUNKED_BODY[:len(b"64\r\n") + 100 + len(b"\r\n7\r\n") + 3]
TRUNCATED_ENTITY = ENTITY[:103]
TRUNCATED_RESPONSE = CHUNKED_RESPONSE[:len(CHUNKED_RESPONSE) - len(CHUNKED_BODY)] + TRUNCATED_BODY
REDIRECT_RESPONSE = b"HTTP/1.1 301 Moved Permanently\r\nLocation: /new/\r\nContent-Length: 0\r\n\r\n"


def revisit(uri):
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"
    return record([
        ("WARC-Type", "revisit"),
        ("WARC-Record-ID", new_id()),
        ("WARC-Date", "2024-05-01T12:00:05.250Z"),
        ("WARC-Target-URI", uri),
        ("WARC-Profile", PROFILE),
        ("WARC-Refers-To-Target-URI", "http://example.test/index.html"),
        ("WARC-Refers-To-Date", DATE),
        ("WARC-Payload-Digest", sha1(ENTITY)),
        ("Content-Type", "application/http; msgtype=response"),
        ("WARC-Block-Digest", sha1(block)),
    ], block)


def good_records(filename):
    return (
        [warcinfo(filename)]
        + exchange("http://example.test/index.html", CHUNKED_RESPONSE, sha1(ENTITY))
        + exchange("http://example.test/robots.txt", PLAIN_RESPONSE, sha1(PLAIN_BODY),
                   content_type_sep=";")
        + exchange("http://example.test/big.html", TRUNCATED_RESPONSE, sha1(TRUNCATED_ENTITY),
                   extra=[("WARC-Truncated", "length")])
        + exchange("http://example.test/old", REDIRECT_RESPONSE, sha1(b""))
        + [revisit("http://example.test/copy.html")]
    )


def write_members(path, records):
    """Each record as its own gzip member — the correct layout."""
    with open(path, "wb") as f:
        for raw in records:
            f.write(gzip.compress(raw))


# ---------------------------------------------------------------- tests

class WarcCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def check(self, *paths, json_out=None):
        cmd = [sys.executable, CHECKER, *paths]
        if json_out:
            cmd += ["--json", json_out]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def assert_ok(self, *paths):
        result = self.check(*paths)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("OK:"), result.stdout)
        return result

    def assert_rejected(self, path, *fragments):
        result = self.check(path)
        self.assertEqual(result.returncode, 1, f"accepted a bad file:\n{result.stdout}")
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)
        self.assertIn(os.path.basename(path), result.stderr)
        return result

    def good_file(self, name="good.warc.gz"):
        path = self.path(name)
        write_members(path, good_records(name))
        return path

    # --- the good file

    def test_good_file_passes(self):
        result = self.assert_ok(self.good_file())
        self.assertIn("request=4", result.stdout)
        self.assertIn("response=4", result.stdout)
        self.assertIn("revisit=1", result.stdout)

    def test_warcio_check_alone_is_wrong_about_chunked_payloads(self):
        # Documents why warc_check.py computes payload digests itself.
        warcio = os.path.join(os.path.dirname(sys.executable), "warcio")
        result = subprocess.run([warcio, "check", self.good_file()],
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("payload digest failed", result.stdout)

    def test_json_summary(self):
        out = self.path("summary.json")
        result = self.check(self.good_file(), json_out=out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out, encoding="utf-8") as f:
            summary = json.load(f)
        self.assertEqual(len(summary), 1)
        records = summary[0]["records"]
        keys = {"type", "target_uri", "date", "record_id", "status", "content_type",
                "payload_digest", "truncated", "offset", "length", "http_headers_raw_chunked"}
        for rec in records:
            self.assertEqual(set(rec), keys)
        self.assertEqual(records[0]["type"], "warcinfo")
        self.assertEqual(records[0]["offset"], 0)
        index = records[2]
        self.assertEqual(index["type"], "response")
        self.assertEqual(index["status"], 200)
        self.assertEqual(index["content_type"], "text/html; charset=utf-8")
        self.assertEqual(index["payload_digest"], sha1(ENTITY))
        self.assertTrue(index["http_headers_raw_chunked"])
        self.assertIsNone(index["truncated"])
        self.assertEqual(records[1]["type"], "request")
        self.assertIsNone(records[1]["status"])
        self.assertFalse(records[4]["http_headers_raw_chunked"])
        self.assertEqual(records[6]["truncated"], "length")
        self.assertEqual(records[8]["status"], 301)
        self.assertEqual(records[9]["type"], "revisit")
        self.assertEqual(records[9]["status"], 200)
        # offsets/lengths describe consecutive gzip members covering the file
        for prev, rec in zip(records, records[1:]):
            self.assertEqual(prev["offset"] + prev["length"], rec["offset"])
        last = records[-1]
        self.assertEqual(last["offset"] + last["length"], os.path.getsize(self.path("good.warc.gz")))

    def test_directory_skips_open_files(self):
        self.good_file("a.warc.gz")
        self.good_file("b.warc.gz")
        with open(self.path("c.warc.gz.open"), "wb") as f:
            f.write(b"half written")
        result = self.assert_ok(self.dir)
        self.assertIn("2 file(s)", result.stdout)

    def test_warcio_writer_output_passes(self):
        # An independent producer: warcio's own writer, for a non-chunked exchange.
        from io import BytesIO
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter
        name = "warcio.warc.gz"
        with open(self.path(name), "wb") as f:
            writer = WARCWriter(f, gzip=True, warc_version="1.1")
            writer.write_record(writer.create_warcinfo_record(name, {"software": "test"}))
            body = b"<p>plain</p>"
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                               ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            resp = writer.create_warc_record("http://example.test/p", "response",
                                             payload=BytesIO(body), http_headers=http,
                                             warc_headers_dict={"WARC-IP-Address": "127.0.0.1",
                                                                "WARC-Date": DATE})
            req_http = StatusAndHeaders("GET /p HTTP/1.1", [("Host", "example.test")],
                                        is_http_request=True)
            req = writer.create_warc_record("http://example.test/p", "request",
                                            http_headers=req_http,
                                            warc_headers_dict={"WARC-Date": DATE})
            req.rec_headers.add_header("WARC-Concurrent-To", resp.rec_headers.get_header("WARC-Record-ID"))
            writer.write_record(req)
            writer.write_record(resp)
            for rec in (req, resp):
                rec.raw_stream.close()  # warcio may have buffered it in a temp file
        self.assert_ok(self.path(name))

    def test_heads_as_servers_send_them(self):
        # Bare-LF line ends, a space before a colon, a line that is no field: stored as
        # received, read as Chromium and trawl read them (the framing header still counts).
        name = "odd-heads.warc.gz"
        body = b"<p>lf only</p>"
        lf_only = b"HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: %d\n\n" % len(body) + body
        chunked_odd = (b"HTTP/1.1 200 OK\r\nThis line is no field\r\nBad Name: x\r\n"
                       b"Transfer-Encoding : chunked\r\n\r\n" + chunked(body, [3]))
        lf_chunks = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"%x\n" % len(body) + body + b"\n0\n\n")
        records = ([warcinfo(name)]
                   + exchange("http://example.test/lf", lf_only, sha1(body))
                   + exchange("http://example.test/odd", chunked_odd, sha1(body))
                   + exchange("http://example.test/lf-chunks", lf_chunks, sha1(body)))
        write_members(self.path(name), records)
        self.assert_ok(self.path(name))

    def test_other_transfer_codings_state_no_payload_digest(self):
        # `gzip, chunked` and `chunked, chunked`: no payload digest stated is right; one
        # stated is a problem, as no reader agrees on what it covers.
        name = "codings.warc.gz"
        body = b"<p>x</p>"
        gz = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
              + chunked(gzip.compress(body), [5]))
        twice = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                 + chunked(body, [3]))
        good = ([warcinfo(name)]
                + exchange("http://example.test/gz", gz, None)
                + exchange("http://example.test/twice", twice, None))
        write_members(self.path(name), good)
        self.assert_ok(self.path(name))
        name = "codings-bad.warc.gz"
        bad = [warcinfo(name)] + exchange("http://example.test/gz", gz, sha1(body))
        write_members(self.path(name), bad)
        result = self.check(self.path(name))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("stated over Transfer-Encoding", result.stderr)

    # --- bad files

    def test_odd_heads_keep_their_digests_checked(self):
        name = "odd-heads-bad.warc.gz"
        body = b"<p>lf only</p>"
        lf_only = b"HTTP/1.1 200 OK\nContent-Length: %d\n\n" % len(body) + body
        chunked_odd = b"HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\n\r\n" + chunked(body, [3])
        lf_chunks = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\n0\n\n"
        records = ([warcinfo(name)]
                   + exchange("http://example.test/lf", lf_only, sha1(body[1:]))
                   + exchange("http://example.test/odd", chunked_odd, sha1(chunked(body, [3])))
                   + exchange("http://example.test/lf-chunks", lf_chunks, sha1(b"")))
        write_members(self.path(name), records)
        result = self.check(self.path(name))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertEqual(result.stderr.count("WARC-Payload-Digest"), 3, result.stderr)
        self.assertIn("de-chunked", result.stderr)

    def test_head_without_end(self):
        name = "no-head-end.warc.gz"
        records = ([warcinfo(name)]
                   + exchange("http://example.test/", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n",
                              sha1(b"")))
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "not terminated by an empty line")


    def test_wrong_payload_digest_on_chunked_response(self):
        # The digest warcio would compute: sha1 of the raw chunked body.
        name = "bad-digest.warc.gz"
        records = ([warcinfo(name)]
                   + exchange("http://example.test/", CHUNKED_RESPONSE, sha1(CHUNKED_BODY)))
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "WARC-Payload-Digest", "de-chunked", "offset ")

    def test_whole_file_gzip(self):
        name = "single-stream.warc.gz"
        with open(self.path(name), "wb") as f:
            f.write(gzip.compress(b"".join(good_records(name))))
        self.assert_rejected(self.path(name), "more than one record")

    def test_wrong_content_length(self):
        name = "bad-length.warc.gz"
        block = CHUNKED_RESPONSE
        records = ([warcinfo(name)]
                   + exchange("http://example.test/", block, sha1(ENTITY),
                              content_length=len(block) + 2))
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "Content-Length")

    def test_bad_block_digest(self):
        name = "bad-block.warc.gz"
        records = good_records(name)
        records[4] = records[4].replace(b"Disallow", b"DISallow", 1)
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "WARC-Block-Digest")

    def test_truncated_chunk_without_warc_truncated(self):
        name = "cut.warc.gz"
        records = ([warcinfo(name)]
                   + exchange("http://example.test/", TRUNCATED_RESPONSE, sha1(TRUNCATED_ENTITY)))
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "chunked body")

    def test_trailing_garbage(self):
        path = self.good_file()
        with open(path, "ab") as f:
            f.write(b"\0\0garbage")
        self.assert_rejected(path, "trailing garbage")

    def test_truncated_file(self):
        path = self.good_file()
        with open(path, "rb+") as f:
            f.truncate(os.path.getsize(path) - 5)
        self.assert_rejected(path, "truncated gzip member")

    def test_empty_file(self):
        path = self.path("empty.warc.gz")
        open(path, "wb").close()
        self.assert_rejected(path, "empty")

    def test_missing_warcinfo(self):
        name = "no-info.warc.gz"
        write_members(self.path(name), good_records(name)[1:])
        self.assert_rejected(self.path(name), "expected 'warcinfo'")

    def test_wrong_warc_filename(self):
        name = "renamed.warc.gz"
        write_members(self.path(name), good_records("other.warc.gz"))
        self.assert_rejected(self.path(name), "WARC-Filename")

    def test_request_without_response(self):
        name = "orphan.warc.gz"
        records = good_records(name)
        del records[2]  # the response of the first request
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "has no response")

    def test_bracketed_target_uri(self):
        name = "brackets.warc.gz"
        records = good_records(name)
        records[4] = records[4].replace(b"WARC-Target-URI: http://example.test/robots.txt",
                                        b"WARC-Target-URI: <http://example.test/robots.txt>")
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "wrapped in <>")

    def test_bad_date_and_version(self):
        name = "dates.warc.gz"
        records = good_records(name)
        records[1] = records[1].replace(b"WARC/1.1", b"WARC/1.0", 1)
        records[2] = records[2].replace(DATE.encode(), b"2024-05-01 12:00:00", 1)
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "expected 'WARC/1.1'", "is not UTC")

    def test_protocol_fields_repeat_and_cipher_suite_does_not(self):
        tls = [("WARC-Protocol", "http/1.1"), ("WARC-Protocol", "tls/1.3"),
               ("WARC-Cipher-Suite", "TLS_AES_128_GCM_SHA256")]
        name = "tls.warc.gz"
        write_members(self.path(name), [warcinfo(name)] + exchange(
            "https://example.test/robots.txt", PLAIN_RESPONSE, sha1(PLAIN_BODY), extra=tls))
        self.assert_ok(self.path(name))
        name = "two-suites.warc.gz"
        write_members(self.path(name), [warcinfo(name)] + exchange(
            "https://example.test/robots.txt", PLAIN_RESPONSE, sha1(PLAIN_BODY),
            extra=tls + [("WARC-Cipher-Suite", "TLS_AES_256_GCM_SHA384")]))
        self.assert_rejected(self.path(name), "duplicate WARC header WARC-Cipher-Suite")
        name = "bad-protocol.warc.gz"
        write_members(self.path(name), [warcinfo(name)] + exchange(
            "https://example.test/robots.txt", PLAIN_RESPONSE, sha1(PLAIN_BODY),
            extra=[("WARC-Protocol", "TLS 1.3")]))
        self.assert_rejected(self.path(name), "is not a protocol id")

    def test_response_without_ip(self):
        name = "no-ip.warc.gz"
        records = good_records(name)
        records[2] = records[2].replace(b"WARC-IP-Address: 127.0.0.1\r\n", b"")
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "WARC-IP-Address")

    def test_revisit_wrong_profile(self):
        name = "revisit.warc.gz"
        records = good_records(name)
        records[-1] = records[-1].replace(b"warc/1.1/revisit", b"warc/1.0/revisit")
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "WARC-Profile")

    def test_bad_record_id(self):
        name = "ids.warc.gz"
        records = good_records(name)
        records[0] = records[0].replace(b"<urn:uuid:", b"<urn:uid:", 1)
        write_members(self.path(name), records)
        self.assert_rejected(self.path(name), "WARC-Record-ID")


class PywbReplayTest(unittest.TestCase):
    """pywb_replay.py against the good file (also pins down pywb 2.10's id_ behaviour)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.warc = os.path.join(cls.tmp.name, "good.warc.gz")
        write_members(cls.warc, good_records("good.warc.gz"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def replay(self, url, *args, expect_bytes=None):
        cmd = [sys.executable, os.path.join(HERE, "pywb_replay.py"), "--warcs", self.warc, "--url", url]
        if expect_bytes is not None:
            expect = os.path.join(self.tmp.name, "expect")
            with open(expect, "wb") as f:
                f.write(expect_bytes)
            cmd += ["--expect", expect]
        return subprocess.run(cmd + list(args), capture_output=True, text=True, check=False)

    def test_chunked_gzip_page_replays_decoded(self):
        # Without Accept-Encoding pywb removes the chunking and decodes gzip.
        result = self.replay("http://example.test/index.html", expect_bytes=gzip.decompress(ENTITY))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_gzip_bytes_with_accept_encoding(self):
        result = self.replay("http://example.test/index.html", "--accept-encoding", "gzip",
                             expect_bytes=ENTITY)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_redirect_and_mismatches(self):
        ok = self.replay("http://example.test/old", "--expect-location", "http://example.test/new/",
                         "--expect-status", "301")
        self.assertEqual(ok.returncode, 0, ok.stderr)
        wrong = self.replay("http://example.test/robots.txt", expect_bytes=b"something else")
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("body: got 34 bytes", wrong.stderr)
        missing = self.replay("http://example.test/never-crawled.html", "--expect-status", "200")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("got 404", missing.stderr)


def main():
    result = unittest.main(verbosity=2, exit=False).result
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"selftest: {passed} passed, {failed} failed, {len(result.skipped)} skipped")
    sys.exit(1 if failed or not result.testsRun else 0)


if __name__ == "__main__":
    main()
