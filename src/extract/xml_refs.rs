//! The character an XML reference in text names (`&amp;`, `&#233;`, `&#xE9;`), as quick-xml
//! hands references to the sitemap and feed readers apart from the text around them. Only the
//! five predefined entities and character references: no other entity is ever expanded, so a
//! DTD cannot make a document grow.

use quick_xml::escape::resolve_xml_entity;
use quick_xml::events::BytesRef;

/// The character `reference` names, or `None` for an entity that is not predefined.
pub(super) fn reference_char(reference: &BytesRef<'_>) -> Option<char> {
    match reference.resolve_char_ref() {
        Ok(Some(c)) => Some(c),
        Ok(None) => resolve_xml_entity(reference).and_then(|s| s.chars().next()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_entities_and_character_references_only() {
        let of = |name: &str| reference_char(&BytesRef::new(name));
        assert_eq!(of("amp"), Some('&'));
        assert_eq!(of("apos"), Some('\''));
        assert_eq!(of("#233"), Some('\u{e9}'));
        assert_eq!(of("#xE9"), Some('\u{e9}'));
        assert_eq!(of("nbsp"), None);
        assert_eq!(of("#xZZ"), None);
    }
}
