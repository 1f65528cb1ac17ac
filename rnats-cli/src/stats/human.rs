//! Numbers written for people: thousands separators, units that fit the magnitude.

/// An integer with `,` between groups of three digits: `1234567` becomes `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    grouped(&n.to_string())
}

/// A figure as Go's `humanize.Commaf` writes it (natscli's bar chart labels): every digit
/// it takes and no more, `,` between groups of three in the whole part: `1234.5` becomes
/// `1,234.5`, `2.0` becomes `2`. `NaN` and the infinities are written as Rust writes them.
pub(crate) fn figure(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    // Rust writes a float with the fewest digits that read back the same, never with an
    // exponent, as Go's `strconv.FormatFloat(v, 'f', -1, 64)` that Commaf starts from.
    let text = value.abs().to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let sign = if value < 0.0 { "-" } else { "" };
    match fraction {
        "" => format!("{sign}{}", grouped(whole)),
        _ => format!("{sign}{}.{fraction}", grouped(whole)),
    }
}

/// A string of digits with `,` between groups of three, counted from the right.
fn grouped(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A rate per second, rounded to a whole number and grouped: `1,234,567`.
pub(crate) fn per_sec(rate: f64) -> String {
    if rate.is_finite() && rate >= 0.0 {
        count(rate.round() as u64)
    } else {
        "-".to_owned()
    }
}

/// Megabytes per second with two decimals: `12.35`.
pub(crate) fn mb_per_sec(rate: f64) -> String {
    format!("{rate:.2}")
}

/// A message size: `128 B`, `4 KiB`, `1.5 MiB`.
pub(crate) fn size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        trim_fraction(b / KIB, "KiB")
    } else {
        trim_fraction(b / (KIB * KIB), "MiB")
    }
}

/// A latency given in microseconds, in the unit that keeps three or so significant
/// digits: `850 ns`, `42.3 µs`, `1.25 ms`, `2.00 s`.
pub(crate) fn latency_us(us: f64) -> String {
    if us < 1.0 {
        format!("{:.0} ns", us * 1e3)
    } else if us < 1e3 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// `value` with one decimal, dropped when it is `.0`, followed by `unit`.
fn trim_fraction(value: f64, unit: &str) -> String {
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_three() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(123_456), "123,456");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn figures_take_the_digits_they_need_and_are_grouped() {
        assert_eq!(figure(2.0), "2");
        assert_eq!(figure(0.5), "0.5");
        assert_eq!(figure(12.125), "12.125");
        assert_eq!(figure(1234.5), "1,234.5");
        assert_eq!(figure(-1234567.0), "-1,234,567");
        assert_eq!(figure(f64::NAN), "NaN");
    }

    #[test]
    fn rates_round_and_group() {
        assert_eq!(per_sec(1_234_567.6), "1,234,568");
        assert_eq!(per_sec(0.2), "0");
        assert_eq!(per_sec(f64::NAN), "-");
        assert_eq!(mb_per_sec(12.345_6), "12.35");
    }

    #[test]
    fn sizes_pick_a_unit() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(128), "128 B");
        assert_eq!(size(1024), "1 KiB");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(1024 * 1024), "1 MiB");
    }

    #[test]
    fn latencies_pick_a_unit() {
        assert_eq!(latency_us(0.85), "850 ns");
        assert_eq!(latency_us(42.34), "42.3 µs");
        assert_eq!(latency_us(1_250.0), "1.25 ms");
        assert_eq!(latency_us(2_000_000.0), "2.00 s");
    }
}
