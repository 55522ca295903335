//! `trawl index`, `trawl wacz` and `trawl derive`: reading finished WARC files back into a CDXJ
//! index, a WACZ package, or WET/WAT derivatives.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::cli::{DeriveArgs, DeriveKind, IndexArgs, WaczArgs};
use crate::derive::{derive_file, DeriveError, DeriveLimits, Kinds};
use crate::exit::ExitCode;
use crate::index::index_readable;
use crate::wacz::{write_wacz, WaczError};
use crate::warc::naming::warc_files_under;
use crate::whole_file::write_whole;

/// The WARC files named by `inputs` (files, or directories holding them at any depth); an error message and
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
    match warc_files_under(inputs) {
        Ok(files) if files.is_empty() => {
            let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "trawl: error: no WARC files (.warc.gz or .warc) in {}",
                names.join(", ")
            );
            Err(ExitCode::BadArguments)
        }
        Ok(files) => Ok(each_once(files)),
        Err(e) => {
            eprintln!("trawl: error: {e}");
            Err(ExitCode::BadArguments)
        }
    }
}

/// `files` with a file named twice (`DIR DIR/X.warc.gz`, `DIR ./DIR`) kept once, where it
/// came first: it was refused as two files sharing a name.
fn each_once(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    files
        .into_iter()
        .filter(|f| seen.insert(std::fs::canonicalize(f).unwrap_or_else(|_| f.clone())))
        .collect()
}

/// Refuses an output file that is one of the input WARC files: written over, the WARC file
/// would be lost (`trawl wacz a.warc.gz a.warc.gz b.warc.gz`, `trawl index -o a.warc.gz
/// a.warc.gz`).
pub(super) fn output_not_an_input(output: &Path, files: &[PathBuf]) -> Result<(), ExitCode> {
    let Ok(out) = std::fs::metadata(output) else {
        return Ok(());
    };
    let same = |f: &PathBuf| {
        std::fs::metadata(f).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino())
    };
    if files.iter().any(same) {
        eprintln!(
            "trawl: error: {}: the output is one of the input WARC files (it would be written over); name another output",
            output.display()
        );
        return Err(ExitCode::BadArguments);
    }
    Ok(())
}

/// Refuses two input files of one name where outputs are named after the inputs' names
/// (derivatives, a WACZ's `archive/` entries): one would take the other's place.
pub(super) fn distinct_names(files: &[PathBuf]) -> Result<(), ExitCode> {
    let mut names: HashMap<&std::ffi::OsStr, &PathBuf> = HashMap::new();
    for f in files {
        let Some(name) = f.file_name() else { continue };
        if let Some(first) = names.insert(name, f) {
            eprintln!(
                "trawl: error: {} and {} share a file name, and what is written is known by it: rename one, or give each its own output",
                first.display(),
                f.display()
            );
            return Err(ExitCode::BadArguments);
        }
    }
    Ok(())
}

/// Refuses an output file whose directory does not exist, naming the output as given.
fn output_directory_exists(output: &Path) -> Result<(), ExitCode> {
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() {
        return Ok(());
    }
    eprintln!(
        "trawl: error: {}: no such directory: {}",
        output.display(),
        dir.display()
    );
    Err(ExitCode::OutputError)
}

pub(super) fn run_index(args: IndexArgs) -> ExitCode {
    let files = match warc_inputs(&args.warcs) {
        Ok(files) => files,
        Err(code) => return code,
    };
    if let Some(output) = &args.output {
        if let Err(code) =
            output_not_an_input(output, &files).and_then(|()| output_directory_exists(output))
        {
            return code;
        }
    }
    // A file that cannot be read to its end (cut short by a killed writer, damaged) gives the
    // lines of its records before the fault, as derive gives their text: exit 2 says so.
    let (lines, faults) = index_readable(&files);
    for e in &faults {
        eprintln!("trawl: error: {e} (the records before it are indexed)");
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let written = match &args.output {
        Some(path) => write_whole(path, text.as_bytes()),
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()),
    };
    match written {
        Ok(()) if faults.is_empty() => ExitCode::Success,
        Ok(()) => ExitCode::BadArguments,
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
    let checked = output_not_an_input(&args.output, &files)
        .and_then(|()| distinct_names(&files))
        .and_then(|()| output_directory_exists(&args.output));
    if let Err(code) = checked {
        return code;
    }
    match write_wacz(&args.output, &files, args.title.as_deref(), args.text) {
        Ok(s) => {
            // A file that cannot be read to its end (cut short, damaged) is packaged with the
            // records before the fault indexed, as py-wacz (cdxj-indexer) packages it: exit 2
            // says so.
            for e in &s.faults {
                eprintln!("trawl: error: {e} (the records before it are indexed and packaged)");
            }
            eprintln!(
                "trawl: wrote {} ({} WARC file(s), {} index lines, {} pages)",
                args.output.display(),
                s.warcs,
                s.index_lines,
                s.pages
            );
            match s.faults.is_empty() {
                true => ExitCode::Success,
                false => ExitCode::BadArguments,
            }
        }
        Err(e @ WaczError::Empty) => {
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
    if let Err(code) = distinct_names(&files) {
        return code;
    }
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
