//! Fuzzes the message-tracing reports (ADR-41) a server sends to a traced message's
//! `Nats-Trace-Dest` (`rnats_core::trace::TraceReport`, which `Client::trace` reads). A report
//! that decodes must survive encode -> decode unchanged, and its accessors must not panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rnats_core::trace::TraceReport;

fuzz_target!(|data: &[u8]| {
    let Ok(report) = serde_json::from_slice::<TraceReport>(data) else {
        return;
    };
    let _ = (report.hop(), report.ingress(), report.egresses().count());
    let json = serde_json::to_vec(&report).expect("a decoded report encodes");
    let again: TraceReport = serde_json::from_slice(&json).expect("an encoded report decodes");
    assert_eq!(again, report);
});
