//! `--validate` and `--output FILE` of `stream add` and `consumer add`: the configuration the
//! command would send, checked and then printed with a verdict or written to a file, with
//! nothing made and no server asked.
//!
//! The checks are the rules of natscli's JSON schema (jsm.go's `stream_configuration` and
//! `consumer_configuration`) that a configuration rnats can hold may break (its types already
//! keep to the schema's enums and number kinds), natscli's own rule against a stream on `>`
//! that acknowledges publishes, and ADR-6's rules for names, which the server applies too.

use std::path::PathBuf;

use clap::Args;
use rnats::jetstream::{consumer, stream};
use serde::Serialize;

use crate::context::store::write_private;
use crate::error::CliError;
use crate::out;

/// `--validate` and `--output FILE`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct CheckFlags {
    /// Only check the configuration and print it with the verdict; create nothing.
    #[arg(long, conflicts_with_all = ["output", "json"])]
    validate: bool,
    /// Write the configuration, once checked, to this JSON file instead of creating it.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    output: Option<PathBuf>,
}

impl CheckFlags {
    /// Whether the command is to check or save the configuration rather than create it.
    pub(crate) fn wanted(&self) -> bool {
        self.validate || self.output.is_some()
    }

    /// Checks `config` (a `noun`, `stream` or `consumer`, with `problems`), then prints it
    /// and the verdict (`--validate`) or writes it to the `--output` file. Problems fail the
    /// command, after the printed configuration and before anything is written.
    pub(crate) fn finish<T: Serialize>(
        &self,
        noun: &'static str,
        config: &T,
        problems: Vec<String>,
    ) -> Result<(), CliError> {
        let mut text = serde_json::to_string_pretty(config)?;
        text.push('\n');
        if self.validate {
            out::print(&text)?;
            out::print("\n")?;
        }
        if !problems.is_empty() {
            return Err(CliError::InvalidConfig { noun, problems });
        }
        match &self.output {
            Some(path) if !self.validate => {
                write_private(path, text.as_bytes()).map_err(|source| CliError::WriteFile {
                    path: path.clone(),
                    source,
                })?;
                eprintln!("Wrote the {noun} configuration to {}", path.display());
                Ok(())
            }
            _ => out::print(&format!("Configuration is a valid {noun}\n")),
        }
    }
}

/// What is wrong with a stream configuration, one phrase each; empty when nothing is.
pub(crate) fn stream_problems(config: &stream::Config) -> Vec<String> {
    let mut problems = Vec::new();
    name_problem(&mut problems, "stream name", &config.name);
    description_problem(&mut problems, config.description.as_deref());
    // natscli's own rule: the stream would store its own publish acknowledgements.
    if !config.no_ack && config.subjects.iter().any(|s| s == ">") {
        problems.push("the subject '>' needs acknowledgements off (--ack=false)".to_owned());
    }
    for (field, value) in [
        ("max_consumers", i64::from(config.max_consumers)),
        ("max_msgs", config.max_messages),
        ("max_msgs_per_subject", config.max_messages_per_subject),
        ("max_bytes", config.max_bytes),
        ("max_msg_size", i64::from(config.max_message_size)),
    ] {
        if value < -1 {
            problems.push(format!("{field} is {value}, below -1 (no limit)"));
        }
    }
    replicas_problem(&mut problems, config.num_replicas);
    problems
}

/// What is wrong with a consumer configuration, one phrase each; empty when nothing is.
pub(crate) fn consumer_problems(config: &consumer::Config) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(name) = &config.name {
        name_problem(&mut problems, "consumer name", name);
    }
    if let Some(durable) = &config.durable_name
        && config.name.as_ref() != Some(durable)
    {
        name_problem(&mut problems, "durable name", durable);
    }
    description_problem(&mut problems, config.description.as_deref());
    for (field, value) in [
        ("deliver_subject", &config.deliver_subject),
        ("deliver_group", &config.deliver_group),
    ] {
        if value.as_deref() == Some("") {
            problems.push(format!("{field} is empty"));
        }
    }
    for (field, items) in [
        ("filter_subjects", &config.filter_subjects),
        ("priority_groups", &config.priority_groups),
    ] {
        if items.iter().any(String::is_empty) {
            problems.push(format!("{field} holds an empty entry"));
        }
    }
    for (field, value) in [
        ("max_waiting", config.max_waiting),
        ("max_batch", config.max_batch),
        ("max_bytes", config.max_bytes),
    ] {
        if value < 0 {
            problems.push(format!("{field} is {value}, below 0"));
        }
    }
    replicas_problem(&mut problems, config.num_replicas);
    problems
}

/// The longest description the server takes, in bytes (nats-server's `JSMaxDescriptionLen`).
const MAX_DESCRIPTION: usize = 4096;

/// The longest stream or consumer name the server takes, in bytes (`JSMaxNameLen`).
const MAX_NAME: usize = 255;

/// The most replicas the schema (and a JetStream cluster) takes.
const MAX_REPLICAS: usize = 5;

/// ADR-6: a stream or consumer name is not empty and holds no whitespace, `.`, `*`, `>`,
/// path separator or control character; and the server takes at most `MAX_NAME` bytes.
fn name_problem(problems: &mut Vec<String>, what: &str, name: &str) {
    if name.is_empty() {
        problems.push(format!("the {what} is empty"));
    } else if let Some(c) = name.chars().find(|&c| !allowed_in_name(c)) {
        problems.push(format!("the {what} {name:?} holds {c:?}"));
    } else if name.len() > MAX_NAME {
        problems.push(format!(
            "the {what} is {} bytes long, more than {MAX_NAME}",
            name.len()
        ));
    }
}

fn allowed_in_name(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || matches!(c, '.' | '*' | '>' | '/' | '\\'))
}

/// The server counts a description's bytes, not its characters.
fn description_problem(problems: &mut Vec<String>, description: Option<&str>) {
    let length = description.map_or(0, str::len);
    if length > MAX_DESCRIPTION {
        problems.push(format!(
            "the description is {length} bytes long, more than {MAX_DESCRIPTION}"
        ));
    }
}

fn replicas_problem(problems: &mut Vec<String>, replicas: usize) {
    if replicas > MAX_REPLICAS {
        problems.push(format!(
            "num_replicas is {replicas}, more than {MAX_REPLICAS}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_stream_and_consumer_pass() {
        let stream = stream::Config {
            name: "ORDERS".into(),
            subjects: vec!["orders.>".into()],
            ..Default::default()
        };
        assert_eq!(stream_problems(&stream), Vec::<String>::new());
        let consumer = consumer::Config {
            name: Some("billing".into()),
            durable_name: Some("billing".into()),
            ..Default::default()
        };
        assert_eq!(consumer_problems(&consumer), Vec::<String>::new());
    }

    #[test]
    fn names_keep_to_adr_6() {
        let mut problems = Vec::new();
        for name in ["", "a.b", "a b", "a*", "a>", "a/b", "a\\b", "a\tb"] {
            name_problem(&mut problems, "stream name", name);
        }
        assert_eq!(problems.len(), 8, "{problems:?}");
        assert_eq!(problems[0], "the stream name is empty");
        assert_eq!(problems[1], "the stream name \"a.b\" holds '.'");
        problems.clear();
        name_problem(&mut problems, "stream name", "ORDERS-2_é");
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn names_and_descriptions_are_measured_in_bytes_as_the_server_does() {
        let mut problems = Vec::new();
        name_problem(&mut problems, "stream name", &"a".repeat(MAX_NAME));
        // 128 two-byte characters: 256 bytes.
        name_problem(&mut problems, "consumer name", &"é".repeat(128));
        description_problem(&mut problems, Some(&"d".repeat(MAX_DESCRIPTION)));
        // 2049 two-byte characters: 4098 bytes, though fewer than 4096 characters.
        description_problem(&mut problems, Some(&"é".repeat(2049)));
        assert_eq!(
            problems,
            [
                "the consumer name is 256 bytes long, more than 255",
                "the description is 4098 bytes long, more than 4096",
            ]
        );
    }

    #[test]
    fn stream_limits_replicas_and_the_full_wildcard_are_checked() {
        let stream = stream::Config {
            name: "ALL".into(),
            subjects: vec![">".into()],
            max_messages: -2,
            max_consumers: -7,
            num_replicas: 6,
            description: Some("d".repeat(MAX_DESCRIPTION + 1)),
            ..Default::default()
        };
        assert_eq!(
            stream_problems(&stream),
            [
                "the description is 4097 bytes long, more than 4096",
                "the subject '>' needs acknowledgements off (--ack=false)",
                "max_consumers is -7, below -1 (no limit)",
                "max_msgs is -2, below -1 (no limit)",
                "num_replicas is 6, more than 5",
            ]
        );
        let unacked = stream::Config {
            name: "ALL".into(),
            subjects: vec![">".into()],
            no_ack: true,
            ..Default::default()
        };
        assert_eq!(stream_problems(&unacked), Vec::<String>::new());
    }

    #[test]
    fn consumer_fields_the_schema_bounds_are_checked() {
        let consumer = consumer::Config {
            name: Some("a.b".into()),
            durable_name: Some("a.b".into()),
            deliver_subject: Some(String::new()),
            filter_subjects: vec!["x".into(), String::new()],
            max_waiting: -1,
            ..Default::default()
        };
        assert_eq!(
            consumer_problems(&consumer),
            [
                "the consumer name \"a.b\" holds '.'",
                "deliver_subject is empty",
                "filter_subjects holds an empty entry",
                "max_waiting is -1, below 0",
            ]
        );
    }
}
