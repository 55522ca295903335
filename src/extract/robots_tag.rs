//! The robots directives a page gives outside robots.txt, for the one of them a crawler obeys:
//! `nofollow` (or `none`, which implies it), said in a `<meta name="robots">` (or a meta named
//! for one robot, `<meta name="trawl">`) or in an `X-Robots-Tag` response field, to every
//! robot or to one by its product token (`X-Robots-Tag: trawl: nofollow`), as Google
//! documents both. `noindex`, `noarchive` and the rest are for search engines and archives'
//! replay, not for what a crawler fetches.

/// Directives whose value follows a colon (`max-snippet: 20`, `unavailable_after: <date>`): a
/// colon after one of these names no robot.
const VALUED: [&str; 4] = [
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

/// True for a directive list (a robots meta's `content`) that forbids following links:
/// `nofollow`, or `none` (noindex and nofollow), as wget and Heritrix read it.
pub fn says_nofollow(directives: &str) -> bool {
    directives
        .split(|c: char| c == ',' || c.is_ascii_whitespace())
        .any(forbids_following)
}

/// True when one `X-Robots-Tag` field value forbids following links to every robot or to
/// `agent` (a lower-case product token). A `name:` prefix gives the directives after it, up
/// to the next such prefix, to that robot alone: `otherbot: noindex, nofollow` is not trawl's.
pub fn field_says_nofollow(value: &str, agent: &str) -> bool {
    let mut ours = true;
    for piece in value.split(',') {
        let mut directive = piece.trim();
        if let Some((name, rest)) = directive.split_once(':') {
            let name = name.trim();
            if VALUED.iter().any(|v| name.eq_ignore_ascii_case(v)) {
                continue;
            }
            if !is_robot_name(name) {
                // A piece of a value with commas in it (a date after `unavailable_after:`).
                continue;
            }
            ours = name.eq_ignore_ascii_case(agent);
            directive = rest.trim();
        }
        if ours && directive.split_ascii_whitespace().any(forbids_following) {
            return true;
        }
    }
    false
}

/// A robot's product token as sites write it before a colon: letters, digits, `-`, `_`.
fn is_robot_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn forbids_following(directive: &str) -> bool {
    directive.eq_ignore_ascii_case("nofollow") || directive.eq_ignore_ascii_case("none")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meta_list_forbids_following_with_nofollow_or_none() {
        for yes in ["nofollow", "noindex, NOFOLLOW", "none", "noindex,nofollow"] {
            assert!(says_nofollow(yes), "{yes}");
        }
        for no in [
            "",
            "index, follow",
            "noindex",
            "noarchive, nosnippet",
            "nofollowing",
        ] {
            assert!(!says_nofollow(no), "{no}");
        }
    }

    #[test]
    fn a_field_forbids_following_to_all_or_to_trawl_by_name() {
        for yes in [
            "nofollow",
            "noindex, nofollow",
            "NONE",
            "trawl: nofollow",
            "Trawl: noindex, nofollow",
            "otherbot: noindex, trawl: nofollow",
            "max-snippet: 20, nofollow",
            "unavailable_after: Friday, 25-Jun-2010 15:00:00 PST, nofollow",
        ] {
            assert!(field_says_nofollow(yes, "trawl"), "{yes}");
        }
        for no in [
            "",
            "noindex",
            "noarchive, nosnippet",
            "googlebot: nofollow",
            "otherbot: noindex, nofollow",
            "trawl: noindex, otherbot: nofollow",
            "max-image-preview: large",
            "unavailable_after: 25 Jun 2010 15:00:00 PST",
        ] {
            assert!(!field_says_nofollow(no, "trawl"), "{no}");
        }
    }
}
