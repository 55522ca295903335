//! `trawl index`, `trawl wacz` and `trawl derive`: reading finished WARC files back into a CDXJ
//! index, a WACZ package, or WET/WAT derivatives.

use std::path::PathBuf;

use crate::cli::{DeriveArgs, DeriveKind, IndexArgs, WaczArgs};
use crate::derive::{derive_file, DeriveError, DeriveLimits, Kinds};
use crate::exit::ExitCode;
use crate::index::index_files;
use crate::wacz::{write_wacz, WaczError};
use crate::warc::naming::list_warc_files;

/// The WARC files named by `inputs` (files, or directories holding them); an error message and
/// exit code when an input is missing or no WARC file is found.
pub(super) fn warc_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ExitCode> {
    for input in inputs {
        if !input.exists() {
            eprintln!(
                "trawl: error: {}: no such file or directory",
                input.display()
            );
            return Err(ExitCode::BadArguments);
        }
    }
    match list_warc_files(inputs) {
        Ok(files) if files.is_empty() => {
            let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "trawl: error: no WARC files (.warc.gz or .warc) in {}",
                names.join(", ")
            );
            Err(ExitCode::BadArguments)
        }
        Ok(files) => Ok(files),
        Err(e) => {
            eprintln!("trawl: error: {e}");
            Err(ExitCode::BadArguments)
        }
    }
}

pub(super) fn run_index(args: IndexArgs) -> ExitCode {
    let files = match warc_inputs(&args.warcs) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let lines = match index_files(&files) {
        Ok(lines) => lines,
        Err(e) => {
            eprintln!("trawl: error: {e}");
            return ExitCode::BadArguments;
        }
    };
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let written = match &args.output {
        Some(path) => std::fs::write(path, text),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::Success,
        Err(e) => {
            eprintln!("trawl: error: writing the index: {e}");
            ExitCode::OutputError
        }
    }
}

pub(super) fn run_wacz(args: WaczArgs) -> ExitCode {
    let files = match warc_inputs(&args.warcs) {
        Ok(files) => files,
        Err(code) => return code,
    };
    match write_wacz(&args.output, &files, args.title.as_deref(), args.text) {
        Ok(s) => {
            eprintln!(
                "trawl: wrote {} ({} WARC file(s), {} index lines, {} pages)",
                args.output.display(),
                s.warcs,
                s.index_lines,
                s.pages
            );
            ExitCode::Success
        }
        Err(e @ (WaczError::Index(_) | WaczError::Empty)) => {
            eprintln!("trawl: error: {e}");
            ExitCode::BadArguments
        }
        Err(e) => {
            eprintln!("trawl: error: {e}");
            ExitCode::OutputError
        }
    }
}

pub(super) fn run_derive(args: DeriveArgs) -> ExitCode {
    let files = match warc_inputs(&args.warcs) {
        Ok(files) => files,
        Err(code) => return code,
    };
    if let Err(e) = std::fs::create_dir_all(&args.output) {
        eprintln!("trawl: error: {}: {e}", args.output.display());
        return ExitCode::OutputError;
    }
    let kinds = Kinds {
        wet: matches!(args.kind, DeriveKind::Wet | DeriveKind::All),
        wat: matches!(args.kind, DeriveKind::Wat | DeriveKind::All),
    };
    let limits = DeriveLimits {
        max_text: usize::try_from(args.max_text).unwrap_or(usize::MAX),
        language: !args.no_language,
        gzip_level: args.gzip_level,
        ..DeriveLimits::default()
    };
    let mut code = ExitCode::Success;
    for warc in &files {
        match derive_file(warc, &args.output, kinds, &limits) {
            Ok(s) => {
                eprintln!(
                    "trawl: {}: {} records read, {} WET and {} WAT records written",
                    warc.display(),
                    s.records,
                    s.wet_records,
                    s.wat_records
                );
                if let Some(e) = s.read_error {
                    eprintln!(
                        "trawl: error: {}: unreadable after record {}: {e} (derivatives hold the records before it)",
                        warc.display(),
                        s.records
                    );
                    code = ExitCode::BadArguments;
                }
            }
            Err(e @ DeriveError::Read { .. }) => {
                eprintln!("trawl: error: {e}");
                code = ExitCode::BadArguments;
            }
            Err(e) => {
                eprintln!("trawl: error: {e}");
                return ExitCode::OutputError;
            }
        }
    }
    code
}
