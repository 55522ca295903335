//! `trawl man`: one man page for the whole command. clap_mangen renders a command's own flags
//! only, so after the top-level sections each subcommand gets its flags (and its notes, such
//! as `crawl`'s exit codes) under headings named after it: `TRAWL CRAWL: REQUESTS`.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;

/// Writes the man page (roff) to `w`.
pub fn write_man_page(w: &mut dyn Write) -> std::io::Result<()> {
    let command = Cli::command();
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_subcommands_section(w)?;
    for sub in command.get_subcommands() {
        if sub.get_arguments().all(|a| a.is_hide_set()) {
            continue;
        }
        let name = format!("trawl {}", sub.get_name()).to_uppercase();
        let sub_man = clap_mangen::Man::new(sub.clone());
        let mut roff = Vec::new();
        sub_man.render_synopsis_section(&mut roff)?;
        sub_man.render_options_section(&mut roff)?;
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            sub_man.render_extra_section(&mut roff)?;
        }
        w.write_all(&headed(&String::from_utf8_lossy(&roff), &name).into_bytes())?;
    }
    man.render_version_section(w)
}

/// `roff` with each section heading prefixed by `name`.
fn headed(roff: &str, name: &str) -> String {
    roff.lines()
        .map(|line| match line.strip_prefix(".SH ") {
            Some(heading) => {
                let heading = match heading.trim_matches('"') {
                    "EXTRA" => "NOTES",
                    other => other,
                };
                format!(".SH \"{name}: {heading}\"\n")
            }
            None => format!("{line}\n"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_crawl_flag_is_in_the_man_page() {
        let mut out = Vec::new();
        write_man_page(&mut out).unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(
            page.starts_with(".ie") || page.contains(".TH trawl"),
            "{page}"
        );
        let crawl = Cli::command();
        let crawl = crawl.find_subcommand("crawl").unwrap();
        for arg in crawl.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                let roff = format!("\\-\\-{}", long.replace('-', "\\-"));
                assert!(page.contains(&roff), "--{long} missing from the man page");
            }
        }
        assert!(page.contains(".SH \"TRAWL CRAWL: REQUESTS\""), "{page}");
    }
}
