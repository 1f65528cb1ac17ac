//! Reading this process's memory use from `/proc/self/status`, and the one-line report a `mem`
//! child process hands back to its parent.

use std::collections::HashMap;
use std::io;

/// Peak resident set size ("high water mark").
pub const PEAK_RSS: &str = "VmHWM";
/// Current resident set size.
pub const RSS: &str = "VmRSS";

/// Marks the child's report line so stray output cannot be mistaken for it.
const REPORT_PREFIX: &str = "rnats-bench-mem";

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`, ...). Linux only; other systems
/// get an `io::Error`.
pub fn self_status_kib(field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status_field_kib(&status, field).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no {field} in /proc/self/status"),
        )
    })
}

/// Finds `field` in the text of a `/proc/<pid>/status` file; values there are in kB (KiB).
pub fn status_field_kib(status: &str, field: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name != field {
            return None;
        }
        let mut words = rest.split_whitespace();
        let value = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") | None => Some(value),
            Some(_) => None,
        }
    })
}

/// Formats a child's results as the single line the parent looks for.
pub fn format_report(values: &[(&str, f64)]) -> String {
    let mut line = REPORT_PREFIX.to_owned();
    for (key, value) in values {
        line.push_str(&format!(" {key}={value}"));
    }
    line
}

/// Finds the report line in a child's stdout and returns its key/value pairs.
pub fn parse_report(stdout: &str) -> Option<HashMap<String, f64>> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with(REPORT_PREFIX))?;
    let mut values = HashMap::new();
    for pair in line[REPORT_PREFIX.len()..].split_whitespace() {
        let (key, value) = pair.split_once('=')?;
        values.insert(key.to_owned(), value.parse().ok()?);
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "Name:\tcompare\nVmPeak:\t  900000 kB\nVmHWM:\t   51234 kB\n\
                          VmRSS:\t   40960 kB\nThreads:\t3\n";

    #[test]
    fn reads_fields_in_kib() {
        assert_eq!(status_field_kib(STATUS, PEAK_RSS), Some(51_234));
        assert_eq!(status_field_kib(STATUS, RSS), Some(40_960));
        assert_eq!(status_field_kib(STATUS, "VmSwap"), None);
        // A prefix of a field name is not that field.
        assert_eq!(status_field_kib(STATUS, "Vm"), None);
    }

    #[test]
    fn own_status_is_readable() {
        if cfg!(target_os = "linux") {
            // Read again after, since RSS can grow between the two reads.
            let now = self_status_kib(RSS).expect("VmRSS");
            let peak = self_status_kib(PEAK_RSS).expect("VmHWM");
            assert!(peak >= now && now > 0);
        }
    }

    #[test]
    fn report_round_trip() {
        let line = format_report(&[("peak_rss_kib", 51234.0), ("per_sub_bytes", 812.5)]);
        let stdout = format!("some log line\n{line}\n");
        let values = parse_report(&stdout).expect("report");
        assert_eq!(values["peak_rss_kib"], 51234.0);
        assert_eq!(values["per_sub_bytes"], 812.5);
        assert_eq!(parse_report("nothing here"), None);
    }
}
