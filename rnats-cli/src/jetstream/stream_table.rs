//! The table of streams `stream ls` and `stream find` print.

use rnats::jetstream::stream::Info;

use super::{bytes, time};
use crate::out::Table;
use crate::stats::human;

/// `stream ls`'s table (and `stream find`'s): one row per stream, in the order given.
pub(super) fn table(infos: &[Info]) -> Table {
    let mut table = Table::new([
        "Name",
        "Subjects",
        "Messages",
        "Bytes",
        "Consumers",
        "Created",
    ]);
    for info in infos {
        table.row(vec![
            info.config.name.clone(),
            info.config.subjects.join(", "),
            human::count(info.state.messages),
            bytes(info.state.bytes),
            info.state.consumer_count.to_string(),
            time(info.created),
        ]);
    }
    table
}
