//! Runs every seed-corpus file (shared with the `parser` fuzz target) through
//! the parser whole and byte by byte.
//!
//! File names state the expected outcome: `ok_*` decodes completely,
//! `partial_*` stops mid-op without error, `bad_*` ends in a `DecodeError`.

mod support;

use std::path::Path;

use rnats_proto::ParserLimits;
use support::{run_bytewise, run_chunked, run_whole};

#[test]
fn every_corpus_file_decodes_the_same_however_it_is_fed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(entries.len() >= 20, "corpus too small: {}", entries.len());

    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(&path).unwrap();
        let limits = ParserLimits::default();
        let whole = run_whole(&input, limits);
        assert_eq!(run_bytewise(&input, limits), whole, "{name}");
        assert_eq!(run_chunked(&input, limits, &[3, 0, 7]), whole, "{name}");

        if name.starts_with("ok_") {
            assert_eq!(whole.error, None, "{name}");
            assert_eq!(whole.leftover, 0, "{name}");
            assert!(!whole.ops.is_empty(), "{name}");
        } else if name.starts_with("partial_") {
            assert_eq!(whole.error, None, "{name}");
            assert!(whole.leftover > 0, "{name}");
        } else if name.starts_with("bad_") {
            assert!(whole.error.is_some(), "{name}: {whole:?}");
        } else {
            panic!("corpus file {name} lacks an ok_/partial_/bad_ prefix");
        }
    }
}
