//! The progress bar of Object Store transfers (`object put` and `object get`).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar on stderr when it is a terminal and `shown` (no `--no-progress`), hidden otherwise;
/// a spinner with a byte count when the size is not known.
pub(super) fn progress_bar(total: Option<u64>, shown: bool) -> ProgressBar {
    if !shown || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(total) => {
            let bar = ProgressBar::new(total);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {eta}")
            {
                bar.set_style(style);
            }
            bar
        }
        None => {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec}") {
                bar.set_style(style);
            }
            bar
        }
    }
}
