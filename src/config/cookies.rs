//! The cookie jar's settings: on unless `--no-cookies`, the cookies of `--load-cookies FILE`
//! (read here, like the seeds file, so a bad file stops the crawl before it starts), and where
//! `--save-cookies` writes the jar.

use std::path::PathBuf;

use cookie_store::Cookie;

use super::ConfigError;
use crate::cli::RequestArgs;
use crate::fetch::cookies_txt;

/// Most skipped lines of a cookies file named in the log (all are counted).
const SHOWN_BAD_LINES: usize = 10;

/// What the crawl does with cookies.
#[derive(Debug, Clone, Default)]
pub struct CookieConfig {
    /// Keep and send cookies (false with `--no-cookies`).
    pub enabled: bool,
    /// The cookies of `--load-cookies`, put in the jar at start (over saved ones).
    pub load: Vec<Cookie<'static>>,
    /// What was wrong with lines of the `--load-cookies` file, for the log.
    pub load_problems: Vec<String>,
    /// `--save-cookies`: where the jar is written when the crawl stops.
    pub save: Option<PathBuf>,
}

impl CookieConfig {
    /// Reads the cookie flags (and the `--load-cookies` file).
    pub fn from_args(args: &RequestArgs) -> Result<CookieConfig, ConfigError> {
        let mut config = CookieConfig {
            enabled: !args.no_cookies,
            save: args.save_cookies.clone(),
            ..Default::default()
        };
        let Some(path) = &args.load_cookies else {
            return Ok(config);
        };
        let text = std::fs::read(path).map_err(|e| {
            ConfigError::BadArgument(format!(
                "cannot read --load-cookies {}: {e}",
                path.display()
            ))
        })?;
        let read = cookies_txt::parse(&String::from_utf8_lossy(&text));
        if read.cookies.is_empty() && !read.bad_lines.is_empty() {
            let (line, why) = &read.bad_lines[0];
            return Err(ConfigError::BadArgument(format!(
                "--load-cookies {}: no cookie in the Netscape cookies.txt format (line {line}: {why})",
                path.display()
            )));
        }
        let mut problems: Vec<String> = read
            .bad_lines
            .iter()
            .take(SHOWN_BAD_LINES)
            .map(|(line, why)| format!("--load-cookies {} line {line}: {why}", path.display()))
            .collect();
        if read.bad_lines.len() > SHOWN_BAD_LINES {
            problems.push(format!(
                "--load-cookies {}: {} more lines skipped",
                path.display(),
                read.bad_lines.len() - SHOWN_BAD_LINES
            ));
        }
        if read.expired > 0 {
            problems.push(format!(
                "--load-cookies {}: {} expired cookie(s) skipped",
                path.display(),
                read.expired
            ));
        }
        config.load = read.cookies;
        config.load_problems = problems;
        Ok(config)
    }
}
