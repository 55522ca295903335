//! Media types of Content-Type values, and which of them are HTML: the one place these rules
//! live (the archive filter, link extraction and the CDXJ index all ask here).

/// Media types whose bodies are parsed as HTML for links and counted as pages by indexes.
pub const HTML_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// The media type of a Content-Type value: the part before any parameter, trimmed and
/// lower-cased (`Text/HTML; charset=x` is `text/html`). Empty when there is none.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The media type as pywb's cdxj-indexer writes it: the text before the first `;` or space,
/// case kept. trawl's CDXJ must equal cdxj-indexer's bytes, so it uses this form.
pub fn media_type_as_indexed(content_type: &str) -> &str {
    content_type.split([';', ' ']).next().unwrap_or("")
}

/// The `charset` parameter of a Content-Type value, if any.
pub fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (k, v) = param.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// True for a media type (as [`media_type`] returns it) that is HTML.
pub fn is_html(media_type: &str) -> bool {
    HTML_TYPES.contains(&media_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_and_parameters() {
        assert_eq!(media_type("Text/HTML; Charset=\"ISO-8859-1\""), "text/html");
        assert_eq!(media_type(""), "");
        assert_eq!(
            charset("text/html; Charset=\"ISO-8859-1\"").as_deref(),
            Some("ISO-8859-1")
        );
        assert_eq!(charset("text/html"), None);
        assert_eq!(media_type_as_indexed("Text/HTML; x"), "Text/HTML");
        assert_eq!(media_type_as_indexed("text/html charset"), "text/html");
        assert!(is_html("application/xhtml+xml") && !is_html("text/plain"));
    }
}
