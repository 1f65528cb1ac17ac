//! A check's result: what was critical, what only warned, what was fine, and the measured
//! values (Nagios "performance data"), rendered in the format asked for.

use serde_json::json;

use super::Format;

/// A check's status; its value is the monitoring-plugin exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// Everything within its thresholds.
    Ok = 0,
    /// Something past a warning threshold.
    Warning = 1,
    /// Something past a critical threshold, or the thing checked is not there.
    Critical = 2,
    /// The check could not be made (e.g. the server refused the request).
    Unknown = 3,
}

impl Status {
    /// The name monitoring systems print.
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warning => "WARNING",
            Status::Critical => "CRITICAL",
            Status::Unknown => "UNKNOWN",
        }
    }
}

/// One measured value, with the thresholds it was held to.
#[derive(Debug, Clone)]
struct Perf {
    name: String,
    value: f64,
    unit: &'static str,
    warn: Option<f64>,
    crit: Option<f64>,
}

/// What a check found.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    name: String,
    criticals: Vec<String>,
    warnings: Vec<String>,
    oks: Vec<String>,
    unknown: Option<String>,
    perf: Vec<Perf>,
}

impl Outcome {
    /// A check called `name` that has found nothing yet.
    pub(crate) fn new(name: impl Into<String>) -> Outcome {
        Outcome {
            name: name.into(),
            criticals: Vec::new(),
            warnings: Vec::new(),
            oks: Vec::new(),
            unknown: None,
            perf: Vec::new(),
        }
    }

    /// Records a critical finding.
    pub(crate) fn critical(&mut self, text: impl Into<String>) {
        self.criticals.push(text.into());
    }

    /// Records a warning.
    pub(crate) fn warning(&mut self, text: impl Into<String>) {
        self.warnings.push(text.into());
    }

    /// Records something found fine.
    pub(crate) fn ok(&mut self, text: impl Into<String>) {
        self.oks.push(text.into());
    }

    /// Marks the check as not made, and why.
    pub(crate) fn unknown(&mut self, text: impl Into<String>) {
        self.unknown = Some(text.into());
    }

    /// Records a measured value.
    pub(crate) fn perf(
        &mut self,
        name: &str,
        value: f64,
        unit: &'static str,
        warn: Option<f64>,
        crit: Option<f64>,
    ) {
        self.perf.push(Perf {
            name: name.to_owned(),
            value,
            unit,
            warn,
            crit,
        });
    }

    /// Unknown if the check could not be made, else the worst finding.
    pub(crate) fn status(&self) -> Status {
        if self.unknown.is_some() {
            Status::Unknown
        } else if !self.criticals.is_empty() {
            Status::Critical
        } else if !self.warnings.is_empty() {
            Status::Warning
        } else {
            Status::Ok
        }
    }

    /// The result in `format`, ending in a newline.
    pub(crate) fn render(&self, format: Format) -> String {
        match format {
            Format::Nagios => format!("{}\n", self.nagios()),
            Format::Json => format!("{}\n", self.json()),
            Format::Text => self.text(),
        }
    }

    /// `STATUS Name Crit:... Warn:... OK:... | name=value[unit];warn;crit ...`
    fn nagios(&self) -> String {
        let mut parts = vec![self.status().as_str().to_owned(), self.name.clone()];
        if let Some(why) = &self.unknown {
            parts.push(format!("Unknown:{why}"));
        }
        parts.extend(self.criticals.iter().map(|c| format!("Crit:{c}")));
        parts.extend(self.warnings.iter().map(|w| format!("Warn:{w}")));
        parts.extend(self.oks.iter().map(|o| format!("OK:{o}")));
        let mut line = parts.join(" ");
        if !self.perf.is_empty() {
            let perf: Vec<String> = self
                .perf
                .iter()
                .map(|p| {
                    let bound = |b: Option<f64>| b.map(number).unwrap_or_default();
                    format!(
                        "{}={}{};{};{}",
                        p.name,
                        number(p.value),
                        p.unit,
                        bound(p.warn),
                        bound(p.crit)
                    )
                })
                .collect();
            line.push_str(" | ");
            line.push_str(&perf.join(" "));
        }
        line
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "status": self.status().as_str(),
            "exit_code": self.status() as u8,
            "unknown": self.unknown,
            "criticals": self.criticals,
            "warnings": self.warnings,
            "oks": self.oks,
            "perf_data": self.perf.iter().map(|p| json!({
                "name": p.name,
                "value": p.value,
                "unit": p.unit,
                "warning": p.warn,
                "critical": p.crit,
            })).collect::<Vec<_>>(),
        })
    }

    fn text(&self) -> String {
        let mut text = format!("{}: {}\n\n", self.name, self.status().as_str());
        if let Some(why) = &self.unknown {
            text.push_str(&format!("  unknown: {why}\n"));
        }
        for (label, items) in [
            ("critical", &self.criticals),
            ("warning", &self.warnings),
            ("ok", &self.oks),
        ] {
            for item in items {
                text.push_str(&format!("  {label}: {item}\n"));
            }
        }
        for p in &self.perf {
            text.push_str(&format!("  {} = {}{}\n", p.name, number(p.value), p.unit));
        }
        text
    }
}

/// A number as Nagios reads it: no exponent, no trailing zeros.
fn number(n: f64) -> String {
    let text = format!("{n:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_finding_decides_the_status() {
        let mut outcome = Outcome::new("Stream ORDERS");
        assert_eq!(outcome.status(), Status::Ok);
        outcome.ok("3 messages");
        outcome.warning("few subjects");
        assert_eq!(outcome.status(), Status::Warning);
        outcome.critical("no leader");
        assert_eq!(outcome.status(), Status::Critical);
        outcome.unknown("refused");
        assert_eq!(outcome.status() as u8, 3);
    }

    #[test]
    fn nagios_lines_carry_performance_data() {
        let mut outcome = Outcome::new("Connection");
        outcome.ok("connected");
        outcome.perf("connect_time", 0.0012, "s", Some(0.5), Some(1.0));
        outcome.perf("msgs", 3.0, "", None, None);
        assert_eq!(
            outcome.render(Format::Nagios),
            "OK Connection OK:connected | connect_time=0.0012s;0.5;1 msgs=3;;\n"
        );
    }
}
