//! The name and version rules of ADR-32, checked by hand (no regex engine for two patterns).

/// A service name: one or more of `A-Z a-z 0-9 - _`.
pub(crate) fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A semantic version 2.0.0: `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, numbers without leading
/// zeros, pre-release identifiers numeric (no leading zero) or alphanumeric, build identifiers
/// any non-empty `[0-9A-Za-z-]+`. The pattern semver.org suggests, which nats.go uses too.
pub(crate) fn is_valid_semver(version: &str) -> bool {
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let mut numbers = core.split('.');
    let core_ok = (0..3).all(|_| numbers.next().is_some_and(is_numeric_identifier))
        && numbers.next().is_none();
    let pre_ok = pre.is_none_or(|pre| pre.split('.').all(is_prerelease_identifier));
    let build_ok = build.is_none_or(|build| build.split('.').all(is_build_identifier));
    core_ok && pre_ok && build_ok
}

/// `0` or a number not starting with `0`.
fn is_numeric_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'))
}

fn is_prerelease_identifier(text: &str) -> bool {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return is_numeric_identifier(text);
    }
    is_build_identifier(text)
}

fn is_build_identifier(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "adder", "my-service_2", "X"] {
            assert!(is_valid_name(good), "{good}");
        }
        for bad in ["", "a.b", "a b", "a*", "a>", "ü"] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn versions() {
        for good in [
            "0.0.0",
            "1.2.3",
            "10.20.30",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x.7.z.92",
            "1.0.0-alpha+001",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
            "1.0.0-x-y-z.--",
            "1.0.0-0A",
        ] {
            assert!(is_valid_semver(good), "{good}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.03",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "1.2.3-a..b",
            "1.2.3+a..b",
            "v1.2.3",
            "1.2.3 ",
            "1.2.-3",
        ] {
            assert!(!is_valid_semver(bad), "{bad}");
        }
    }
}
