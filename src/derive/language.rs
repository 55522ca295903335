//! Identifies the language of extracted text with whatlang (trigram models of 69 languages,
//! no data files): the ISO 639-3 code Common Crawl's WET files carry in
//! `WARC-Identified-Content-Language`, given only when the detector calls its guess reliable.

/// How much text is looked at: enough for a stable guess, bounded cost per page (whatlang's
/// time grows with the text: 4 KiB cost ~0.3 ms per page on the benchmark web).
const SAMPLE_BYTES: usize = 1536;
/// Lines shorter than this (menus, buttons, dates) are skipped when the page has longer ones:
/// prose identifies a language, navigation often does not.
const PROSE_LINE: usize = 40;

/// The ISO 639-3 code of the language of `text`, when identified reliably.
pub fn identify(text: &str) -> Option<&'static str> {
    let info = whatlang::detect(&sample(text))?;
    info.is_reliable().then(|| info.lang().code())
}

/// Up to SAMPLE_BYTES of the page's prose lines, else of its text.
fn sample(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().filter(|l| l.len() >= PROSE_LINE) {
        if out.len() >= SAMPLE_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    let source = if out.is_empty() { text } else { out.as_str() };
    let mut end = source.len().min(SAMPLE_BYTES);
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    source[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies_common_languages() {
        let en = "The quick brown fox jumps over the lazy dog while the children watch from \
                  the window of the old house near the river, laughing at every leap.";
        let de = "Der schnelle braune Fuchs springt über den faulen Hund, während die Kinder \
                  vom Fenster des alten Hauses am Fluss zusehen und über jeden Sprung lachen.";
        let fr = "Le renard brun rapide saute par-dessus le chien paresseux pendant que les \
                  enfants regardent depuis la fenêtre de la vieille maison près de la rivière.";
        assert_eq!(identify(en), Some("eng"));
        assert_eq!(identify(de), Some("deu"));
        assert_eq!(identify(fr), Some("fra"));
        assert_eq!(identify("12 34"), None);
    }
}
