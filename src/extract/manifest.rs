//! The images a web app manifest (`<link rel=manifest>`) names: its `icons`, its
//! `screenshots` and its `shortcuts`' icons, each a `src` relative to the manifest. A browser
//! reads the manifest as it loads the page and fetches an icon from it. Parsed with serde_json,
//! whose recursion limit bounds a hostile file's nesting. Pure: JSON text in, URL strings out,
//! capped.

use serde::Deserialize;
use serde_json::Value;

/// Most URLs taken from one manifest.
pub const MAX_MANIFEST_URLS: usize = 100;

/// The members read; every other member is skipped as it is parsed, not built (a JSON
/// requisite that is no manifest may be large).
#[derive(Deserialize)]
struct Members {
    #[serde(default)]
    icons: Value,
    #[serde(default)]
    screenshots: Value,
    #[serde(default)]
    shortcuts: Value,
}

/// The `src` of each image `json` (a manifest) lists, in order; nothing when it is not one.
pub fn manifest_urls(json: &str) -> Vec<String> {
    // A manifest is an object (serde would read an array's items as the members in order).
    let object = json.trim_start().starts_with('{');
    let Some(manifest) = object
        .then(|| serde_json::from_str::<Members>(json).ok())
        .flatten()
    else {
        return Vec::new();
    };
    let shortcut_icons = manifest
        .shortcuts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("icons"));
    [&manifest.icons, &manifest.screenshots]
        .into_iter()
        .chain(shortcut_icons)
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|image| image.get("src")?.as_str())
        .map(str::trim)
        .filter(|src| !src.is_empty())
        .take(MAX_MANIFEST_URLS)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icons_screenshots_and_shortcut_icons() {
        let json = r#"{"name": "x", "icons": [{"src": "/i/192.png", "sizes": "192x192"},
            {"src": "https:\/\/a.org\/lib\/exe\/fetch.php?media=wiki:logo.svg"}, {"sizes": "1x1"}],
            "screenshots": [{"src": "shot.webp"}],
            "shortcuts": [{"name": "s", "url": "/s", "icons": [{"src": "s.png"}]}],
            "start_url": "/", "scope": "/"}"#;
        assert_eq!(
            manifest_urls(json),
            [
                "/i/192.png",
                "https://a.org/lib/exe/fetch.php?media=wiki:logo.svg",
                "shot.webp",
                "s.png"
            ]
        );
    }

    #[test]
    fn what_is_not_a_manifest_names_nothing() {
        for json in [
            "",
            "[1, 2]",
            "[[{\"src\": \"a.png\"}]]",
            "{\"icons\": 5}",
            "{\"icons\": [\"a.png\"]}",
            "not json",
        ] {
            assert!(manifest_urls(json).is_empty(), "{json}");
        }
        let deep = "[".repeat(100_000);
        assert!(manifest_urls(&deep).is_empty());
        let many = format!(
            "{{\"icons\": [{}]}}",
            vec!["{\"src\": \"a.png\"}"; 5_000].join(",")
        );
        assert_eq!(manifest_urls(&many).len(), MAX_MANIFEST_URLS);
    }
}
