//! The URLs a script names that a browser loads when it runs the page (`--page-requisites`):
//! module specifiers (`import … from "./x.js"`, `import("./x.js")`, `export … from`), the
//! first argument of `new URL("x.png", import.meta.url)`, of `new Worker(…)` and
//! `importScripts(…)`, and strings that name a static asset by its path, as bundlers write
//! an imported image or a lazily loaded chunk (`"/assets/logo-1a2b.svg"`).
//!
//! Read by a lexer of JavaScript's tokens: comments, regular expressions and template
//! substitutions are skipped, so a URL inside them is not taken. It never recurses (template
//! nesting is an explicit, bounded stack): a JavaScript parser overflows its stack on a
//! hostile script's nesting (docs/DESIGN.md). Pure: text in, references out, capped.

use url::Url;

use crate::url_rules::resolve_link;

use url_text::{asset_path, relative_or_http, unescape, url_like, MAX_URL_LEN};

mod url_text;

/// Most URLs taken from one script.
pub const MAX_SCRIPT_URLS: usize = 1_000;
/// Template literals nested inside substitutions deeper than this end the scan.
const MAX_TEMPLATE_NESTING: usize = 64;

/// A URL a script names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptUrl {
    /// As written (escapes decoded).
    pub text: String,
    /// A module specifier or `new URL(…, import.meta.url)`: relative to the script's own URL.
    /// Otherwise relative to the document that runs it.
    pub module_relative: bool,
}

/// The URLs `js` names, in order, at most [`MAX_SCRIPT_URLS`].
pub fn script_urls(js: &str) -> Vec<ScriptUrl> {
    let mut lexer = Lexer {
        src: js.as_bytes(),
        text: js,
        at: 0,
        last: Tok::None,
        before_last: Tok::None,
        templates: Vec::new(),
        out: Vec::new(),
        rescanned: 0,
    };
    lexer.run();
    lexer.out
}

/// A significant token, as much of it as the lexer's decisions need.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    None,
    /// An identifier, keyword or number; `dotted`: after a `.` (a property name).
    Word {
        word: &'a str,
        dotted: bool,
    },
    Punct(u8),
    /// A string or template literal, a regular expression.
    Literal,
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    at: usize,
    last: Tok<'a>,
    before_last: Tok<'a>,
    /// Open template substitutions (`${`), each with the braces opened inside it.
    templates: Vec<u32>,
    out: Vec<ScriptUrl>,
    /// Bytes read ahead for a regular expression or a string that did not end on its line,
    /// and so will be read again: bounded, or a line of `(/[` repeated would cost the square
    /// of its length.
    rescanned: usize,
}

impl<'a> Lexer<'a> {
    fn run(&mut self) {
        if self.src.starts_with(b"#!") {
            self.skip_line();
        }
        let rescan_budget = self.src.len().saturating_mul(2).max(1 << 16);
        while self.at < self.src.len()
            && self.out.len() < MAX_SCRIPT_URLS
            && self.rescanned <= rescan_budget
        {
            let b = self.src[self.at];
            match b {
                b if b.is_ascii_whitespace() => self.at += 1,
                b'/' if self.peek(1) == Some(b'/') => self.skip_line(),
                b'/' if self.peek(1) == Some(b'*') => self.skip_block_comment(),
                b'/' if self.regex_may_start() && self.skip_regex() => self.push(Tok::Literal),
                b'\'' | b'"' => self.string(b),
                b'`' => {
                    self.at += 1;
                    if !self.template_rest(true) {
                        return;
                    }
                }
                b'{' => {
                    if let Some(open) = self.templates.last_mut() {
                        *open += 1;
                    }
                    self.punct(b);
                }
                b'}' => match self.templates.last_mut() {
                    Some(0) => {
                        self.templates.pop();
                        self.at += 1;
                        if !self.template_rest(false) {
                            return;
                        }
                    }
                    Some(open) => {
                        *open -= 1;
                        self.punct(b);
                    }
                    None => self.punct(b),
                },
                b if is_word_byte(b) => self.word(),
                _ => self.punct(b),
            }
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.at + ahead).copied()
    }

    fn push(&mut self, tok: Tok<'a>) {
        self.before_last = self.last;
        self.last = tok;
    }

    fn punct(&mut self, b: u8) {
        self.at += 1;
        self.push(Tok::Punct(b));
    }

    fn word(&mut self) {
        let start = self.at;
        while self.at < self.src.len() && is_word_byte(self.src[self.at]) {
            self.at += 1;
        }
        let dotted = self.last == Tok::Punct(b'.');
        let word = self.text.get(start..self.at).unwrap_or("");
        self.push(Tok::Word { word, dotted });
    }

    fn skip_line(&mut self) {
        while self.at < self.src.len() && self.src[self.at] != b'\n' {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        match memchr_pair(&self.src[self.at + 2..], b"*/") {
            Some(end) => self.at += 2 + end + 2,
            None => self.at = self.src.len(),
        }
    }

    /// A `/` here starts a regular expression rather than a division: after an operator or
    /// an opening bracket, at the start, or after a keyword that takes an expression.
    fn regex_may_start(&self) -> bool {
        match self.last {
            Tok::None => true,
            Tok::Punct(p) => !matches!(p, b')' | b']'),
            Tok::Word { word, dotted } => {
                !dotted
                    && matches!(
                        word,
                        "return"
                            | "typeof"
                            | "instanceof"
                            | "in"
                            | "of"
                            | "new"
                            | "delete"
                            | "void"
                            | "throw"
                            | "case"
                            | "do"
                            | "else"
                            | "yield"
                            | "await"
                    )
            }
            Tok::Literal => false,
        }
    }

    /// Skips a regular expression literal; false (nothing consumed) when none ends on its
    /// line, so the `/` was a division after all.
    fn skip_regex(&mut self) -> bool {
        let mut i = self.at + 1;
        let mut class = false;
        while let Some(&b) = self.src.get(i) {
            match b {
                b'\n' | b'\r' => break,
                b'\\' => i += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => {
                    i += 1;
                    while i < self.src.len() && is_word_byte(self.src[i]) {
                        i += 1;
                    }
                    self.at = i;
                    return true;
                }
                _ => {}
            }
            i += 1;
        }
        self.rescanned += i - self.at;
        false
    }

    /// A quoted string: decoded, and offered as a reference.
    fn string(&mut self, quote: u8) {
        let start = self.at + 1;
        let mut i = start;
        let mut escaped = false;
        while let Some(&b) = self.src.get(i) {
            match b {
                b'\\' => {
                    escaped = true;
                    i += 2;
                    continue;
                }
                b'\n' | b'\r' => break,
                b if b == quote => {
                    self.at = i + 1;
                    self.literal(self.text.get(start..i).unwrap_or(""), escaped);
                    return;
                }
                _ => {}
            }
            i += 1;
        }
        // Unterminated on its line: not a string after all.
        self.rescanned += i - start;
        self.punct(quote);
    }

    /// The rest of a template literal from just after its opening backtick (`whole`) or a
    /// substitution's closing brace. Offered as a reference only when it has no
    /// substitution. False when nesting is too deep to go on.
    fn template_rest(&mut self, whole: bool) -> bool {
        let start = self.at;
        let mut escaped = false;
        while let Some(&b) = self.src.get(self.at) {
            match b {
                b'\\' => {
                    escaped = true;
                    self.at += 2;
                    continue;
                }
                b'`' => {
                    self.at += 1;
                    match whole {
                        true => {
                            let raw = self.text.get(start..self.at - 1).unwrap_or("");
                            self.literal(raw, escaped)
                        }
                        false => self.push(Tok::Literal),
                    }
                    return true;
                }
                b'$' if self.peek(1) == Some(b'{') => {
                    self.at += 2;
                    if self.templates.len() >= MAX_TEMPLATE_NESTING {
                        return false;
                    }
                    self.templates.push(0);
                    self.push(Tok::Punct(b'{'));
                    return true;
                }
                _ => self.at += 1,
            }
        }
        true
    }

    /// A string or substitution-free template whose raw text is `raw`.
    fn literal(&mut self, raw: &'a str, escaped: bool) {
        let context = self.context();
        self.push(Tok::Literal);
        // Escapes take at most 10 bytes for a character: longer is no URL.
        if raw.len() > MAX_URL_LEN * 10 {
            return;
        }
        let text = match escaped {
            true => unescape(raw),
            false => raw.to_string(),
        };
        let module_relative = match context {
            Context::Specifier if url_like(&text) => true,
            // A bare specifier (`"react"`) names a module through an import map.
            Context::Specifier => return,
            Context::NewUrl if relative_or_http(&text) && self.import_meta_url_follows() => true,
            Context::Worker if relative_or_http(&text) => false,
            _ if asset_path(&text) => false,
            _ => return,
        };
        self.out.push(ScriptUrl {
            text,
            module_relative,
        });
    }

    /// What the tokens just before a string make of it.
    fn context(&self) -> Context {
        let word = |t: Tok<'a>| -> Option<&'a str> {
            match t {
                Tok::Word {
                    word,
                    dotted: false,
                } => Some(word),
                _ => None,
            }
        };
        match (word(self.last), self.last, word(self.before_last)) {
            // `import "./x.js"`, `… from "./x.js"`.
            (Some("import" | "from"), ..) => Context::Specifier,
            (_, Tok::Punct(b'('), Some("import")) => Context::Specifier,
            (_, Tok::Punct(b'('), Some("URL")) => Context::NewUrl,
            (_, Tok::Punct(b'('), Some("Worker" | "SharedWorker" | "importScripts")) => {
                Context::Worker
            }
            _ => Context::Plain,
        }
    }

    /// After a `new URL(` string: `, import.meta.url` (perhaps `, "" + import.meta.url`, as
    /// bundlers write it), which makes the string relative to the script itself.
    fn import_meta_url_follows(&self) -> bool {
        let rest = self.text.get(self.at..).unwrap_or("");
        let Some(rest) = rest.trim_start().strip_prefix(',') else {
            return false;
        };
        let rest = rest.trim_start();
        let rest = ["\"\"", "''", "``"]
            .iter()
            .find_map(|e| rest.strip_prefix(e))
            .and_then(|r| r.trim_start().strip_prefix('+'))
            .unwrap_or(rest);
        rest.trim_start().starts_with("import.meta.url")
    }
}

impl ScriptUrl {
    /// The absolute URL this names in a script fetched from `script`, if it can be told: a
    /// module specifier against the script, a URL or a path from the root or `./` against
    /// the script too (the page that runs it is not known here). A path without either
    /// (`"assets/a.css"`) is how a bundler names a file from the site's base, which a browser
    /// resolves against the document: when the script sits under a directory of that name
    /// (`/assets/index.js`, `/app/static/js/main.js` for `"static/media/a.svg"`), the base is
    /// the path above it. Without such a directory the string is left: relative to a page
    /// this script does not know, or no URL at all (jQuery UI names its AMD modules
    /// `"ui/effects/effect-blind.js"`).
    pub fn resolve_in_script(&self, script: &Url) -> Option<Url> {
        let text = self.text.as_str();
        let rooted = text.starts_with('/') || text.starts_with("./") || text.starts_with("../");
        if self.module_relative || rooted || text.contains(':') {
            return resolve_link(script, text);
        }
        let first = text.split('/').next().unwrap_or("");
        let path = script.path();
        let dirs = &path[..path.rfind('/').unwrap_or(0)];
        let (at, _) = dirs
            .rmatch_indices('/')
            .find(|&(i, _)| dirs[i + 1..].split('/').next() == Some(first))?;
        resolve_link(&script.join(&dirs[..=at]).ok()?, text)
    }
}

enum Context {
    /// A module specifier.
    Specifier,
    /// The first argument of `new URL(`.
    NewUrl,
    /// The script of `new Worker(`, `new SharedWorker(`, `importScripts(`.
    Worker,
    Plain,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn memchr_pair(hay: &[u8], pair: &[u8; 2]) -> Option<usize> {
    hay.windows(2).position(|w| w == pair)
}

#[cfg(test)]
mod tests;
