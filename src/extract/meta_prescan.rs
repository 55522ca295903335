//! The encoding a page's `<meta>` declares, found as a browser finds it before parsing: the HTML
//! standard's "prescan a byte stream to determine its encoding" (section 13.2.3.2), with its
//! "get an attribute" and "extracting a character encoding from a meta element" steps.
//!
//! Comments and the attributes of other tags are stepped over, so a commented-out
//! `<!-- <meta charset=iso-8859-1> -->` or a `content="... charset=koi8-r"` in a description
//! declares nothing; a `content` charset counts only beside `http-equiv="content-type"`. One
//! addition to the standard's steps, as Chromium's tokenizer-based prescan has it: the text of
//! `script`, `style`, `title`, `textarea` and the other raw-text elements is skipped to their end
//! tag, so a script that writes `'<meta charset=...>'` declares nothing either.

use encoding_rs::Encoding;

/// Elements whose content the HTML tokenizer reads as text up to their end tag.
const RAW_TEXT: [&[u8]; 8] = [
    b"script",
    b"style",
    b"title",
    b"textarea",
    b"xmp",
    b"iframe",
    b"noembed",
    b"noframes",
];

/// The encoding the first `<meta>` that declares one in `bytes` names, read no further than
/// `bytes`: `None` when none does (a `<meta>` cut off by the end of `bytes` declares nothing).
/// UTF-16 in a meta means UTF-8 (the page's bytes were readable as ASCII to find it) and
/// `x-user-defined` means windows-1252, as the standard says.
pub fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let mut scan = Scan { b: bytes, at: 0 };
    while scan.at < bytes.len() {
        let rest = &bytes[scan.at..];
        if rest.starts_with(b"<!--") {
            // The comment ends at the first `-->`, whose dashes may be the opening's own.
            let end = memchr::memmem::find(&rest[2..], b"-->")?;
            scan.at += 2 + end + 3;
            continue;
        }
        if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space_or_slash(b))
        {
            scan.at += 6;
            if let Some(found) = scan.meta()? {
                return Some(found);
            }
            continue;
        }
        let letter_at = match rest.get(1) {
            Some(b'/') => 2,
            _ => 1,
        };
        if rest[0] == b'<' && rest.get(letter_at).is_some_and(u8::is_ascii_alphabetic) {
            let name_start = scan.at + letter_at;
            let name_len = rest[letter_at..]
                .iter()
                .position(|&b| is_space(b) || b == b'>')
                .unwrap_or(rest.len() - letter_at);
            scan.at = name_start + name_len;
            while scan.attribute()?.is_some() {}
            if letter_at == 1 {
                scan.skip_raw_text(&bytes[name_start..name_start + name_len])?;
            }
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            scan.at += memchr::memchr(b'>', rest)? + 1;
            continue;
        }
        scan.at += 1;
    }
    None
}

/// A position in the bytes being scanned. Every step returns `None` when it runs out of bytes,
/// which ends the whole prescan.
struct Scan<'a> {
    b: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn byte(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    /// The attributes of a `<meta>` (the position just past `<meta` and its space or slash):
    /// `Some(Some(encoding))` when it declares one, `Some(None)` when it does not.
    fn meta(&mut self) -> Option<Option<&'static Encoding>> {
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let (mut got_pragma, mut need_pragma, mut charset) = (false, None, None);
        while let Some((name, value)) = self.attribute()? {
            if seen.contains(&name) {
                continue;
            }
            match name.as_slice() {
                b"http-equiv" => got_pragma |= value == b"content-type",
                b"content" if charset.is_none() => {
                    if let Some(found) = charset_in_content(&value) {
                        charset = Encoding::for_label(found);
                        need_pragma = Some(true);
                    }
                }
                b"charset" => {
                    charset = Encoding::for_label(&value);
                    need_pragma = Some(false);
                }
                _ => {}
            }
            seen.push(name);
        }
        let declared = match need_pragma {
            Some(true) if !got_pragma => None,
            Some(_) => charset,
            None => None,
        };
        Some(declared.map(|encoding| match encoding {
            e if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => encoding_rs::UTF_8,
            e if e == encoding_rs::X_USER_DEFINED => encoding_rs::WINDOWS_1252,
            e => e,
        }))
    }

    /// The standard's "get an attribute": the next attribute's name and value, both lower-cased,
    /// or `Some(None)` at the tag's `>`. Character references in the value are decoded, as
    /// Chromium's tokenizer-based prescan decodes them (`charset=&quot;koi8-r&quot;`).
    fn attribute(&mut self) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
        let (name, value) = match self.raw_attribute()? {
            None => return Some(None),
            Some(found) => found,
        };
        Some(Some((name, decode_references(value))))
    }

    fn raw_attribute(&mut self) -> Option<Option<(Vec<u8>, Vec<u8>)>> {
        while is_space_or_slash(self.byte()?) {
            self.at += 1;
        }
        if self.byte()? == b'>' {
            return Some(None);
        }
        let mut name = Vec::new();
        loop {
            match self.byte()? {
                b'=' if !name.is_empty() => {
                    self.at += 1;
                    break;
                }
                b if is_space(b) => {
                    while is_space(self.byte()?) {
                        self.at += 1;
                    }
                    if self.byte()? != b'=' {
                        return Some(Some((name, Vec::new())));
                    }
                    self.at += 1;
                    break;
                }
                b'/' | b'>' => return Some(Some((name, Vec::new()))),
                b => name.push(b.to_ascii_lowercase()),
            }
            self.at += 1;
        }
        while is_space(self.byte()?) {
            self.at += 1;
        }
        let mut value = Vec::new();
        match self.byte()? {
            quote @ (b'"' | b'\'') => loop {
                self.at += 1;
                match self.byte()? {
                    b if b == quote => {
                        self.at += 1;
                        return Some(Some((name, value)));
                    }
                    b => value.push(b.to_ascii_lowercase()),
                }
            },
            b'>' => return Some(Some((name, value))),
            _ => {}
        }
        loop {
            match self.byte()? {
                b if is_space(b) || b == b'>' => return Some(Some((name, value))),
                b => value.push(b.to_ascii_lowercase()),
            }
            self.at += 1;
        }
    }

    /// After the start tag `name` (the position past its `>`): for a raw-text element, moves past
    /// the text to its end tag, which the main loop then reads.
    fn skip_raw_text(&mut self, name: &[u8]) -> Option<()> {
        if !RAW_TEXT.iter().any(|raw| raw.eq_ignore_ascii_case(name)) {
            return Some(());
        }
        let mut from = self.at;
        loop {
            let lt = from + memchr::memmem::find(&self.b[from..], b"</")?;
            let after = &self.b[lt + 2..];
            if starts_with_ignore_case(after, name)
                && after
                    .get(name.len())
                    .is_some_and(|&b| is_space_or_slash(b) || b == b'>')
            {
                self.at = lt;
                return Some(());
            }
            from = lt + 2;
        }
    }
}

/// `value` with its character references that stand for ASCII decoded (numeric ones, and the
/// named ones a charset label or a `content` value can be written with), lower-cased; others
/// are left as they are, which declares no label.
fn decode_references(value: Vec<u8>) -> Vec<u8> {
    if !value.contains(&b'&') {
        return value;
    }
    let mut out = Vec::with_capacity(value.len());
    let mut at = 0;
    while at < value.len() {
        if value[at] == b'&' {
            if let Some((byte, len)) = reference_at(&value[at + 1..]) {
                out.push(byte.to_ascii_lowercase());
                at += 1 + len;
                continue;
            }
        }
        out.push(value[at]);
        at += 1;
    }
    out
}

/// The ASCII byte a reference (the bytes after its `&`) stands for, and how many bytes it
/// takes; the `;` may be missing, as the tokenizer allows for these.
fn reference_at(rest: &[u8]) -> Option<(u8, usize)> {
    let semicolon = |len: usize| len + usize::from(rest.get(len) == Some(&b';'));
    if rest.first() == Some(&b'#') {
        let (radix, start) = match rest.get(1) {
            Some(b'x' | b'X') => (16, 2),
            _ => (10, 1),
        };
        let digits = rest[start..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit() && (radix == 16 || b.is_ascii_digit()))
            .count();
        let text = std::str::from_utf8(&rest[start..start + digits]).ok()?;
        let code = u32::from_str_radix(text, radix).ok()?;
        let byte = u8::try_from(code).ok().filter(u8::is_ascii)?;
        return Some((byte, semicolon(start + digits)));
    }
    // Name, byte, and whether the name is one of the legacy ones that may go without `;`.
    const NAMED: [(&[u8], u8, bool); 9] = [
        (b"quot", b'"', true),
        (b"amp", b'&', true),
        (b"apos", b'\'', false),
        (b"semi", b';', false),
        (b"equals", b'=', false),
        (b"lowbar", b'_', false),
        (b"period", b'.', false),
        (b"colon", b':', false),
        (b"sol", b'/', false),
    ];
    NAMED.iter().find_map(|&(name, byte, legacy)| {
        let named = rest.len() >= name.len() && rest[..name.len()] == *name;
        let ended = rest.get(name.len()) == Some(&b';');
        (named && (ended || legacy)).then(|| (byte, semicolon(name.len())))
    })
}

/// The standard's "extracting a character encoding from a meta element": the label after the
/// first `charset` followed by `=` in a `content` value, quoted or up to a space or `;`.
fn charset_in_content(content: &[u8]) -> Option<&[u8]> {
    let mut from = 0;
    loop {
        from += memchr::memmem::find(&content[from..], b"charset")? + 7;
        let mut at = from;
        while content.get(at).is_some_and(|&b| is_space(b)) {
            at += 1;
        }
        if content.get(at) != Some(&b'=') {
            from = at;
            continue;
        }
        at += 1;
        while content.get(at).is_some_and(|&b| is_space(b)) {
            at += 1;
        }
        let rest = &content[at..];
        return match rest.first()? {
            &quote @ (b'"' | b'\'') => {
                let end = memchr::memchr(quote, &rest[1..])?;
                Some(&rest[1..1 + end])
            }
            _ => {
                let end = rest
                    .iter()
                    .position(|&b| is_space(b) || b == b';')
                    .unwrap_or(rest.len());
                Some(&rest[..end])
            }
        };
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

fn is_space_or_slash(b: u8) -> bool {
    is_space(b) || b == b'/'
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(html: &str) -> Option<&'static str> {
        meta_charset(html.as_bytes()).map(Encoding::name)
    }

    #[test]
    fn the_declaring_forms_are_found() {
        assert_eq!(
            found("<meta charset=\"windows-1252\">"),
            Some("windows-1252")
        );
        assert_eq!(found("<META CHARSET=Shift_JIS>"), Some("Shift_JIS"));
        assert_eq!(found("<meta/charset='koi8-r'/>"), Some("KOI8-R"));
        assert_eq!(
            found("<meta http-equiv=Content-Type content='text/html; charset=koi8-r'>"),
            Some("KOI8-R")
        );
        assert_eq!(
            found("<meta content=\"text/html; charset = 'gbk'\" http-equiv=\"content-type\">"),
            Some("GBK")
        );
        assert_eq!(found("<meta charset=utf-16le>"), Some("UTF-8"));
        assert_eq!(
            found("<meta charset=\"x-user-defined\">"),
            Some("windows-1252")
        );
        // Character references are decoded, as Chromium's prescan decodes them.
        assert_eq!(
            found("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=&quot;koi8-r&quot;\">"),
            Some("KOI8-R")
        );
        assert_eq!(
            found("<meta charset=\"windows&#45;1251\">"),
            Some("windows-1251")
        );
        assert_eq!(
            found("<meta charset=\"shift&lowbar;jis\">"),
            Some("Shift_JIS")
        );
        // The first meta that declares wins; one naming no known label declares nothing.
        assert_eq!(
            found("<meta charset=nonsense><meta charset=iso-8859-2><meta charset=gbk>"),
            Some("ISO-8859-2")
        );
    }

    #[test]
    fn what_only_looks_like_a_declaration_is_not_one() {
        // A commented-out meta, also when the real one follows.
        assert_eq!(
            found("<!-- <meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"> --><meta charset=\"utf-8\">"),
            Some("UTF-8")
        );
        assert_eq!(found("<!--<meta charset=koi8-r>-->"), None);
        // `<!-->` ends its comment at once.
        assert_eq!(found("<!--><meta charset=gbk>"), Some("GBK"));
        // `content` without the pragma, and another tag's attribute.
        assert_eq!(
            found("<meta name=description content=\"How to set charset=koi8-r\">"),
            None
        );
        assert_eq!(found("<div title=\"<meta charset=koi8-r>\">"), None);
        // Text of a script, a title or a textarea.
        assert_eq!(
            found("<script>var s='<meta charset=\"windows-1251\">'</script><meta charset=gbk>"),
            Some("GBK")
        );
        assert_eq!(found("<title><meta charset=koi8-r></title>"), None);
        assert_eq!(found("<script>'</scripts><meta charset=koi8-r>'"), None);
        // `<metadata>` is no meta; a meta cut off by the end of the bytes declares nothing.
        assert_eq!(found("<metadata charset=koi8-r>"), None);
        // A reference to a letter that makes no label still declares nothing.
        assert_eq!(found("<meta charset=\"&eacute;\">"), None);
        assert_eq!(found("<meta charset=koi8-r"), None);
        assert_eq!(found("<meta charset=\"koi8-r"), None);
    }
}
