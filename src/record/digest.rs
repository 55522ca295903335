//! WARC digests: `sha1:` + base32 of SHA-1, and the payload of a recorded response.

use sha1::{Digest, Sha1};

use crate::http_message::parse_response_head;

/// The `sha1:BASE32` digest of `data`, as used in WARC-Block-Digest and WARC-Payload-Digest.
pub fn sha1_digest(data: &[u8]) -> String {
    sha1_digest_pieces([data])
}

/// [`sha1_digest`] of the bytes `pieces` make end to end (a long body's windows,
/// `Spooled::windows`).
pub fn sha1_digest_pieces<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha1::new();
    for piece in pieces {
        hasher.update(piece);
    }
    format!("sha1:{}", data_encoding::BASE32.encode(&hasher.finalize()))
}

/// The payload of a recorded HTTP response: the entity body with transfer coding removed and
/// content coding kept (WARC 1.1 section 5.9). `None` when the head cannot be parsed.
pub fn payload_of_response(response: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
    Some(parse_response_head(response)?.payload(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed independently with Python:
    //   base64.b32encode(hashlib.sha1(data).digest())
    #[test]
    fn digests_match_python_hashlib() {
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(
            sha1_digest(b"hello world"),
            "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"
        );
    }

    #[test]
    fn payload_of_chunked_response_is_dechunked() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n";
        let payload = payload_of_response(raw).unwrap();
        assert_eq!(&*payload, b"hello world");
        assert_eq!(
            sha1_digest(&payload),
            "sha1:FKXGYNOJJ7H3IFO35FPUBC445EPOQRXN"
        );
    }
}
