//! Decodes Content-Encoding (gzip, deflate, br) with a cap on the decoded size; a value that
//! names no compression (`utf-8`, `none`) leaves the body as it is.
//!
//! Only link extraction needs decoded bodies; the archive keeps them encoded. The cap stops
//! decompression bombs: decoding stops at `cap` bytes and says so.

use std::borrow::Cow;
use std::io::Read;

use flate2::read::{DeflateDecoder, ZlibDecoder};

/// The decoded body and whether it was cut at the cap.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// Decoded bytes, at most `cap` long: the body itself when it has no content coding.
    pub data: Cow<'a, [u8]>,
    /// True when more decoded data existed than the cap allowed.
    pub capped: bool,
}

/// Why a body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// A compression we do not implement (`compress`, `zstd`, ...).
    #[error("unsupported content-encoding {0:?}")]
    Unsupported(String),
    /// The compressed stream is corrupt, or stops before its end (a truncated body).
    #[error("corrupt {coding} stream: {source}")]
    Corrupt {
        /// The coding that failed.
        coding: String,
        /// The decoder's error.
        source: std::io::Error,
        /// What decoded before the break (at most the cap): the part of a cut or broken page
        /// a browser shows, from which its links can still be read.
        decoded: Vec<u8>,
    },
}

impl DecodeError {
    /// What decoded before the break of a corrupt or cut stream; none for a coding trawl does
    /// not implement.
    pub fn decoded_part(self) -> Option<Vec<u8>> {
        match self {
            DecodeError::Corrupt { decoded, .. } => Some(decoded),
            DecodeError::Unsupported(_) => None,
        }
    }
}

/// Decodes `body` according to the Content-Encoding value `encoding` (codings applied in the
/// order listed, so they are removed in reverse), producing at most `cap` bytes.
pub fn decode_content<'a>(
    encoding: Option<&str>,
    body: &'a [u8],
    cap: usize,
) -> Result<Decoded<'a>, DecodeError> {
    let codings: Vec<String> = encoding
        .unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    let Some((last, rest)) = codings.split_last() else {
        return Ok(Decoded {
            data: Cow::Borrowed(&body[..body.len().min(cap)]),
            capped: body.len() > cap,
        });
    };
    // Codings were applied in the order listed, so the last one is removed first. After a
    // break, what decoded so far goes on through the other codings, and the first break is
    // the one reported.
    let mut broken: Option<(String, std::io::Error)> = None;
    let mut current = Decoded {
        data: Cow::Borrowed(body),
        capped: false,
    };
    let mut removed: Option<&str> = None;
    for coding in std::iter::once(last).chain(rest.iter().rev()) {
        // `gzip, gzip` over a body gzipped once: a proxy or a framework repeated the field.
        // What is left is no gzip stream (no magic bytes), so the repetition is skipped and
        // the page read, where Chromium shows nothing (a reading more lenient than a
        // browser's costs nothing here: the archive keeps the bytes as they came).
        if removed.is_some_and(is_gzip) && is_gzip(coding) && !current.data.starts_with(&GZIP_MAGIC)
        {
            continue;
        }
        removed = Some(coding);
        current = match decode_one(coding, &current.data, cap)? {
            Ok(decoded) => decoded,
            Err((source, partial)) => {
                broken.get_or_insert((coding.clone(), source));
                Decoded {
                    data: Cow::Owned(partial),
                    capped: false,
                }
            }
        };
    }
    match broken {
        None => Ok(current),
        Some((coding, source)) => Err(DecodeError::Corrupt {
            coding,
            source,
            decoded: current.data.into_owned(),
        }),
    }
}

/// The first bytes of every gzip member (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn is_gzip(coding: &str) -> bool {
    matches!(coding, "gzip" | "x-gzip")
}

/// One coding removed: the decoded bytes, or the decoder's error and what decoded before it.
type Step = Result<Decoded<'static>, (std::io::Error, Vec<u8>)>;

fn decode_one(coding: &str, input: &[u8], cap: usize) -> Result<Step, DecodeError> {
    Ok(match coding {
        "gzip" | "x-gzip" => gunzip(input, cap),
        "deflate" => {
            // RFC 9110 says zlib-wrapped, but many servers send raw deflate. When neither
            // reads to the end, the one that decoded more is taken.
            match read_capped(ZlibDecoder::new(input), cap) {
                Ok(decoded) => Ok(decoded),
                Err((zlib_error, zlib_partial)) => {
                    match read_capped(DeflateDecoder::new(input), cap) {
                        Ok(decoded) => Ok(decoded),
                        Err((_, raw_partial)) if raw_partial.len() > zlib_partial.len() => {
                            Err((zlib_error, raw_partial))
                        }
                        Err(_) => Err((zlib_error, zlib_partial)),
                    }
                }
            }
        }
        "br" => read_capped(brotli_decompressor::Decompressor::new(input, 8192), cap),
        "compress" | "x-compress" | "zstd" | "dcb" | "dcz" | "sdch" | "pack200-gzip" => {
            return Err(DecodeError::Unsupported(coding.to_string()))
        }
        // Not a compression at all (`utf-8`, `none`, `binary`, `text`: what misconfigured
        // servers put there): the body is taken as it is, as Chromium passes a coding it does
        // not know through.
        _ => Ok(Decoded {
            data: Cow::Owned(input[..input.len().min(cap)].to_vec()),
            capped: input.len() > cap,
        }),
    })
}

/// The gzip members of `input`, one after another (RFC 1952 allows several), producing at most
/// `cap` bytes. Bytes after the last member that do not start another one (a newline or junk
/// that a server or script appended) are left alone, as Chromium and GNU wget leave them,
/// instead of failing the whole body.
fn gunzip(input: &[u8], cap: usize) -> Step {
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let mut data = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        let room = limit.saturating_sub(data.len() as u64);
        if let Err(e) = (&mut member).take(room).read_to_end(&mut data) {
            data.truncate(cap);
            return Err((e, data));
        }
        if data.len() > cap {
            break;
        }
        rest = member.into_inner();
        if !rest.starts_with(&[0x1f, 0x8b]) {
            break;
        }
    }
    Ok(capped(data, cap))
}

/// Everything `reader` decodes, up to `cap` bytes; on an error, what it decoded before.
fn read_capped(reader: impl Read, cap: usize) -> Step {
    let mut data = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    // read_to_end keeps what it read before an error.
    match reader.take(limit).read_to_end(&mut data) {
        Ok(_) => Ok(capped(data, cap)),
        Err(e) => {
            data.truncate(cap);
            Err((e, data))
        }
    }
}

fn capped(mut data: Vec<u8>, cap: usize) -> Decoded<'static> {
    let capped = data.len() > cap;
    data.truncate(cap);
    Decoded {
        data: Cow::Owned(data),
        capped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn identity_and_gzip_round_trip() {
        assert_eq!(*decode_content(None, b"abc", 10).unwrap().data, *b"abc");
        let z = gzip(b"<html>hello</html>");
        let d = decode_content(Some("gzip"), &z, 1000).unwrap();
        assert_eq!(*d.data, *b"<html>hello</html>");
        assert!(!d.capped);
    }

    #[test]
    fn a_repeated_gzip_field_over_a_body_gzipped_once_is_read() {
        let page = b"<a href=/x>x</a>";
        let twice = gzip(&gzip(page));
        assert_eq!(
            *decode_content(Some("gzip, gzip"), &twice, 1000)
                .unwrap()
                .data,
            *page
        );
        let once = gzip(page);
        assert_eq!(
            *decode_content(Some("gzip, x-gzip"), &once, 1000)
                .unwrap()
                .data,
            *page
        );
        assert_eq!(
            *decode_content(Some("gzip, gzip"), &once, 1000)
                .unwrap()
                .data,
            *page
        );
        // A label over a body that is no gzip at all stays invalid.
        assert!(decode_content(Some("gzip, gzip"), page, 1000).is_err());
    }

    #[test]
    fn bomb_is_capped() {
        let z = gzip(&vec![b'a'; 10_000_000]);
        assert!(z.len() < 100_000);
        let d = decode_content(Some("gzip"), &z, 4096).unwrap();
        assert_eq!(d.data.len(), 4096);
        assert!(d.capped);
    }

    #[test]
    fn gzip_members_follow_one_another_and_trailing_bytes_are_left() {
        let mut two = gzip(b"<a href=/one>1</a>");
        two.extend(gzip(b"<a href=/two>2</a>"));
        let d = decode_content(Some("gzip"), &two, 1000).unwrap();
        assert_eq!(*d.data, *b"<a href=/one>1</a><a href=/two>2</a>");
        let mut trailing = two.clone();
        trailing.extend_from_slice(b"\n\n<!-- appended -->");
        let d = decode_content(Some("gzip"), &trailing, 1000).unwrap();
        assert_eq!(*d.data, *b"<a href=/one>1</a><a href=/two>2</a>");
        // The cap holds across members.
        let d = decode_content(Some("x-gzip"), &two, 20).unwrap();
        assert_eq!(*d.data, *b"<a href=/one>1</a><a");
        assert!(d.capped);
        // A second member that starts but is cut short is still an error, as is no gzip at all.
        let mut cut = gzip(b"a");
        cut.extend_from_slice(&gzip(b"b")[..6]);
        assert!(decode_content(Some("gzip"), &cut, 1000).is_err());
        assert_eq!(
            decode_content(Some("gzip"), b"", 1000).unwrap().data.len(),
            0
        );
    }

    #[test]
    fn a_cut_stream_gives_what_decoded_before_the_cut() {
        let page: Vec<u8> = (0..2000)
            .flat_map(|i| format!("<a href=/p{i}>page {i}</a>\n").into_bytes())
            .collect();
        let z = gzip(&page);
        let cut = &z[..z.len() / 2];
        let Err(e) = decode_content(Some("gzip"), cut, 1 << 20) else {
            panic!("a cut stream decoded whole");
        };
        let part = e.decoded_part().unwrap();
        assert!(part.len() > page.len() / 4, "{}", part.len());
        assert!(page.starts_with(&part));
        // Through two codings, the inner one's part goes on through the outer one.
        let twice = gzip(&z);
        let Err(e) = decode_content(Some("gzip, gzip"), &twice[..twice.len() - 4], 1 << 20) else {
            panic!("a cut stream decoded whole");
        };
        assert_eq!(e.decoded_part().unwrap(), page);
        assert!(DecodeError::Unsupported("zstd".into())
            .decoded_part()
            .is_none());
    }

    #[test]
    fn a_coding_that_is_no_compression_passes_the_body_through() {
        for coding in ["utf-8", "none", "Binary", "gzip, utf-8"] {
            let body = if coding.starts_with("gzip") {
                gzip(b"<p>x</p>")
            } else {
                b"<p>x</p>".to_vec()
            };
            let decoded = decode_content(Some(coding), &body, 100).unwrap();
            assert_eq!(&*decoded.data, b"<p>x</p>", "{coding}");
        }
        let capped = decode_content(Some("utf-8"), b"0123456789", 4).unwrap();
        assert_eq!((&*capped.data, capped.capped), (&b"0123"[..], true));
    }

    #[test]
    fn corrupt_and_unsupported_are_errors() {
        assert!(matches!(
            decode_content(Some("gzip"), b"not gzip", 100),
            Err(DecodeError::Corrupt { .. })
        ));
        assert!(matches!(
            decode_content(Some("zstd"), b"x", 100),
            Err(DecodeError::Unsupported(_))
        ));
    }
}
