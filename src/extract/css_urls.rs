//! The URLs a stylesheet (or a `style` attribute) needs: `url(...)` anywhere and `@import`
//! strings, read with cssparser's tokenizer (Servo's CSS syntax crate), never by pattern.
//! Pure: CSS text in, URL references out, in order, capped.

use cssparser::{ParseError, Parser, Token};

/// Most URLs taken from one stylesheet.
pub const MAX_CSS_URLS: usize = 1_000;
/// Blocks nested deeper than this are not searched (a hostile stylesheet cannot recurse far).
const MAX_NESTING: usize = 32;

/// The `url()` and `@import` references of `css`.
pub fn css_urls(css: &str) -> Vec<String> {
    let mut parser = Parser::new(css);
    let mut out = Vec::new();
    walk(&mut parser, &mut out, 0, false);
    out
}

/// `image-set()` and its prefixed forms, whose strings are URLs (CSS Images 4).
fn is_image_set(name: &str) -> bool {
    name.eq_ignore_ascii_case("image-set") || name.eq_ignore_ascii_case("-webkit-image-set")
}

fn push(out: &mut Vec<String>, url: &str) {
    let url = url.trim();
    if !url.is_empty() && out.len() < MAX_CSS_URLS {
        out.push(url.to_string());
    }
}

/// Walks one block; inside `image-set()` (`strings_are_urls`) a quoted string is an image URL.
/// An `@import` counts only at the top, before any rule but `@charset` and `@layer`
/// statements, as browsers read it: one after a rule, or inside a block, is ignored to its
/// `;`, with the URL it names (browsers do not load it; requesting it asked for files a site
/// had deleted).
fn walk(parser: &mut Parser<'_>, out: &mut Vec<String>, nesting: usize, strings_are_urls: bool) {
    let mut after_import = false;
    let (mut rules_started, mut ignoring) = (nesting > 0, false);
    while let Ok(token) = parser.next() {
        if out.len() >= MAX_CSS_URLS {
            return;
        }
        let token = token.clone();
        if ignoring {
            ignoring = token != Token::Semicolon;
            continue;
        }
        let import = std::mem::take(&mut after_import);
        match token {
            Token::UnquotedUrl(url) => push(out, &url),
            Token::QuotedString(s) if import || strings_are_urls => push(out, &s),
            Token::AtKeyword(name) if name.eq_ignore_ascii_case("import") => {
                after_import = !rules_started;
                ignoring = rules_started;
            }
            Token::AtKeyword(name)
                if name.eq_ignore_ascii_case("charset") || name.eq_ignore_ascii_case("layer") => {}
            Token::AtKeyword(_) => rules_started = true,
            Token::Function(name) if name.eq_ignore_ascii_case("url") => {
                let _ = parser.parse_nested_block(|p| -> Result<(), ParseError<()>> {
                    if let Ok(Token::QuotedString(s)) = p.next() {
                        push(out, &s.clone());
                    }
                    Ok(())
                });
            }
            Token::Function(name) if is_image_set(&name) && nesting < MAX_NESTING => {
                let _ = parser.parse_nested_block(|p| -> Result<(), ParseError<()>> {
                    walk(p, out, nesting + 1, true);
                    Ok(())
                });
            }
            Token::Function(_)
            | Token::CurlyBracketBlock
            | Token::SquareBracketBlock
            | Token::ParenthesisBlock
                if nesting < MAX_NESTING =>
            {
                rules_started |= token == Token::CurlyBracketBlock;
                let _ = parser.parse_nested_block(|p| -> Result<(), ParseError<()>> {
                    walk(p, out, nesting + 1, false);
                    Ok(())
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_imports() {
        let css = r#"@import "base.css"; @import url(print.css) print;
            body { background: url( 'bg.png' ) no-repeat; }
            @font-face { src: url(font.woff2) format("woff2"), url("font.woff"); }
            .x::after { content: "url(not-a-url)"; }
            @media screen { .y { background-image: image-set(url(a@2x.png) 2x); } }"#;
        assert_eq!(
            css_urls(css),
            [
                "base.css",
                "print.css",
                "bg.png",
                "font.woff2",
                "font.woff",
                "a@2x.png"
            ]
        );
        assert_eq!(css_urls("color: red; background: URL(x.gif)"), ["x.gif"]);
    }

    #[test]
    fn an_import_after_a_rule_or_in_a_block_is_ignored() {
        let css = r#"@charset "utf-8"; @layer base; @import "a.css"; @import url(b.css);
            p { color: red } @import "late.css"; @import url(late2.css) screen;
            @media print { @import "nested.css"; } body { background: url(bg.png) }"#;
        assert_eq!(css_urls(css), ["a.css", "b.css", "bg.png"]);
    }

    #[test]
    fn image_set_strings_are_urls() {
        let css = r#".a { background-image: image-set("a.avif" type("image/avif") 1x, url(b.png) 2x);
            background: -webkit-image-set('c.png' 1x); content: "d.png"; }"#;
        assert_eq!(css_urls(css), ["a.avif", "b.png", "c.png"]);
    }

    #[test]
    fn hostile_css_is_bounded() {
        let deep = format!("{}url(x){}", "a(".repeat(10_000), ")".repeat(10_000));
        assert!(css_urls(&deep).len() <= 1);
        let many = "a{b:url(x)}".repeat(5_000);
        assert_eq!(css_urls(&many).len(), MAX_CSS_URLS);
    }
}
