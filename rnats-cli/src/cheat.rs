//! `rnats cheat`: short example sheets per topic, as natscli's `nats cheat` has, written for
//! rnats (`src/cheats/*.md`, in the `cheat` tool's format: `# what`, then command lines).

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;
use crate::out;

/// The sheets: natscli's section names, each with the rnats command it covers.
const SHEETS: [Sheet; 14] = [
    sheet("account", &["a"], include_str!("cheats/account.md")),
    sheet("bench", &[], include_str!("cheats/bench.md")),
    sheet(
        "consumer",
        &["con", "c"],
        include_str!("cheats/consumer.md"),
    ),
    sheet("context", &["ctx"], include_str!("cheats/context.md")),
    sheet("errors", &["err"], include_str!("cheats/errors.md")),
    sheet("events", &["event"], include_str!("cheats/events.md")),
    sheet("kv", &[], include_str!("cheats/kv.md")),
    sheet("latency", &["lat"], include_str!("cheats/latency.md")),
    sheet("object", &["obj"], include_str!("cheats/object.md")),
    sheet("publish", &["pub"], include_str!("cheats/publish.md")),
    sheet(
        "reply",
        &["req", "request"],
        include_str!("cheats/reply.md"),
    ),
    sheet(
        "server",
        &["srv", "sys", "rtt"],
        include_str!("cheats/server.md"),
    ),
    sheet("stream", &["str", "s"], include_str!("cheats/stream.md")),
    sheet("subscribe", &["sub"], include_str!("cheats/subscribe.md")),
];

/// One sheet.
struct Sheet {
    /// Its section name (natscli's).
    name: &'static str,
    /// Other names it is found by: the command's own and its aliases.
    aliases: &'static [&'static str],
    /// Its text.
    text: &'static str,
}

const fn sheet(name: &'static str, aliases: &'static [&'static str], text: &'static str) -> Sheet {
    Sheet {
        name,
        aliases,
        text,
    }
}

/// Options of `rnats cheat`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  rnats cheat\n  rnats cheat sub\n  rnats cheat --sections")]
pub(crate) struct CheatArgs {
    /// The sheet to show (a section, or its command: `pub`, `sub`, `kv`, ...); all without.
    section: Option<String>,
    /// List the sections.
    #[arg(long, conflicts_with = "section")]
    sections: bool,
    /// Write each sheet to DIR/rnats/SECTION for the `cheat` tool, instead of showing them.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["section", "sections"])]
    save: Option<PathBuf>,
}

/// Runs `rnats cheat`.
pub(crate) fn run(args: CheatArgs) -> Result<(), CliError> {
    if args.sections {
        let names: Vec<&str> = SHEETS.iter().map(|s| s.name).collect();
        return out::print(&format!("{}\n", names.join("\n")));
    }
    if let Some(dir) = args.save {
        return save(&dir.join("rnats"));
    }
    match args.section {
        Some(section) => {
            let sheet = find(&section).ok_or_else(|| CliError::InvalidArgument {
                what: "cheat section",
                given: section.clone(),
                reason: format!(
                    "the sections are {}",
                    SHEETS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                ),
            })?;
            out::print(sheet.text)
        }
        None => {
            let all: Vec<String> = SHEETS
                .iter()
                .map(|s| format!("## {}\n\n{}", s.name, s.text))
                .collect();
            out::print(&all.join("\n"))
        }
    }
}

/// The sheet named `section` or one of its aliases.
fn find(section: &str) -> Option<&'static Sheet> {
    SHEETS
        .iter()
        .find(|s| s.name == section || s.aliases.contains(&section))
}

/// Writes every sheet into `dir`, one file per section.
fn save(dir: &std::path::Path) -> Result<(), CliError> {
    let failed = |path: PathBuf| move |source| CliError::WriteFile { path, source };
    std::fs::create_dir_all(dir).map_err(failed(dir.to_path_buf()))?;
    for sheet in &SHEETS {
        let path = dir.join(sheet.name);
        std::fs::write(&path, sheet.text).map_err(failed(path.clone()))?;
    }
    eprintln!("Wrote {} cheat sheets to {}", SHEETS.len(), dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    /// `line` split as `sh` would split it, for the quoting the sheets use: single and
    /// double quotes, no escapes or expansions.
    fn words(line: &str) -> Vec<String> {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut quote = None;
        let mut in_word = false;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    in_word = true;
                }
                (None, ' ') => {
                    if in_word {
                        words.push(std::mem::take(&mut word));
                        in_word = false;
                    }
                }
                (None, c) => {
                    word.push(c);
                    in_word = true;
                }
            }
        }
        assert!(quote.is_none(), "unclosed quote in {line:?}");
        if in_word {
            words.push(word);
        }
        words
    }

    #[test]
    fn every_line_of_every_sheet_is_a_command_rnats_takes() {
        for sheet in &SHEETS {
            assert!(sheet.text.ends_with('\n'), "{}", sheet.name);
            for line in sheet.text.lines() {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                // What is piped into rnats is the shell's business.
                let at = line
                    .find("rnats ")
                    .unwrap_or_else(|| panic!("{}: no rnats in {line:?}", sheet.name));
                let args = words(&line[at..]);
                if let Err(e) = Cli::try_parse_from(&args) {
                    panic!("{}: {line:?} does not parse: {e}", sheet.name);
                }
            }
        }
    }

    #[test]
    fn sections_are_found_by_name_and_by_command() {
        assert_eq!(find("publish").map(|s| s.name), Some("publish"));
        assert_eq!(find("pub").map(|s| s.name), Some("publish"));
        assert_eq!(find("sub").map(|s| s.name), Some("subscribe"));
        assert!(find("nope").is_none());
        for sheet in &SHEETS {
            assert!(
                SHEETS
                    .iter()
                    .filter(|s| s.name != sheet.name)
                    .all(|s| !s.aliases.contains(&sheet.name)),
                "{}",
                sheet.name
            );
        }
    }
}
