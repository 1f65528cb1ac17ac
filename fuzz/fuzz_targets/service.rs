//! Fuzzes the Service API replies a client reads from `$SRV.PING`, `$SRV.INFO` and
//! `$SRV.STATS` (rnats-service's discovery). A reply that decodes must survive
//! encode -> decode unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rnats_service::{Info, PingResponse, Stats};
use serde::Serialize;
use serde::de::DeserializeOwned;

fuzz_target!(|data: &[u8]| {
    round_trip::<PingResponse>(data);
    round_trip::<Info>(data);
    round_trip::<Stats>(data);
});

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<T>(data) else {
        return;
    };
    let json = serde_json::to_vec(&value).expect("a decoded reply encodes");
    let again: T = serde_json::from_slice(&json).expect("an encoded reply decodes");
    assert_eq!(again, value);
}
