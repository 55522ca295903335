//! WET: one `conversion` record of plain text per HTML or plain-text response, in Common
//! Crawl's layout: the title on the first line, then the text; `WARC-Refers-To` names the
//! response, `WARC-Identified-Content-Language` its language when identified.

use crate::record::builder::{derived_record, WarcRecord};
use crate::record::sha1_digest;
use crate::warc::reader::StoredRecord;

/// The block of a WET record: title line (when there is a title), then the text. Control
/// characters other than the line ends that part lines, and the no-break space, are spaces,
/// as Common Crawl's extractor makes them (`ExtractingParseObserver`): an escape sequence or
/// a lone CR of a page is no text.
pub fn wet_text(title: Option<&str>, text: &str) -> String {
    let block = match title {
        Some(t) if !text.is_empty() => format!("{t}\n{text}"),
        Some(t) => t.to_string(),
        None => text.to_string(),
    };
    match block.contains(is_blanked) {
        true => block.replace(is_blanked, " "),
        false => block,
    }
}

/// A character WET writes as a space.
fn is_blanked(c: char) -> bool {
    (c.is_ascii_control() && c != '\n') || c == '\u{a0}'
}

/// A WARC-Date to the second: a WET record is WARC/1.0, whose dates have no fraction
/// (another tool's WARC/1.1 source may have one), as Common Crawl rewrites them.
fn to_the_second(date: &str) -> std::borrow::Cow<'_, str> {
    match (date.find('.'), date.ends_with('Z')) {
        (Some(dot), true) => format!("{}Z", &date[..dot]).into(),
        _ => date.into(),
    }
}

/// The WET record of `response` holding `text`; `cut`: why the text is not all of the page's
/// (`WARC-Truncated`: `length` at the text's cap, `time` for a page read only in part), so a
/// reader can tell a page's end from a cut.
pub fn wet_record(
    response: &StoredRecord,
    text: &str,
    language: Option<&str>,
    cut: Option<&str>,
) -> WarcRecord {
    let target = response.target_uri().unwrap_or("");
    let date = to_the_second(response.header("WARC-Date").unwrap_or(""));
    let refers_to = response.header("WARC-Record-ID").unwrap_or("");
    let digest = sha1_digest(text.as_bytes());
    let mut fields = vec![
        ("WARC-Target-URI", target),
        ("WARC-Date", &date),
        ("WARC-Refers-To", refers_to),
        ("WARC-Block-Digest", digest.as_str()),
    ];
    if let Some(lang) = language {
        fields.push(("WARC-Identified-Content-Language", lang));
    }
    if let Some(reason) = cut {
        fields.push(("WARC-Truncated", reason));
    }
    fields.push(("Content-Type", "text/plain"));
    derived_record("conversion", &fields, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_spaces_and_dates_whole_seconds() {
        assert_eq!(
            wet_text(
                Some("Ti\u{1}tle"),
                "esc\u{1b}[31mred\u{7f} bell\u{7}\nline1\rline2\u{a0}x"
            ),
            "Ti tle\nesc [31mred  bell \nline1 line2 x"
        );
        assert_eq!(
            to_the_second("2026-01-02T03:04:05.123456Z"),
            "2026-01-02T03:04:05Z"
        );
        assert_eq!(
            to_the_second("2026-01-02T03:04:05Z"),
            "2026-01-02T03:04:05Z"
        );
    }
}
