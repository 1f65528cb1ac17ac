//! Fuzzes Object Store metadata: the object info JSON stored under `$O.<bucket>.M.<name>`,
//! which `info`, `get`, `list` and `watch` decode. Info that decodes must survive
//! encode -> decode unchanged, as every update writes it back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rnats_jetstream::object_store::ObjectInfo;

fuzz_target!(|data: &[u8]| {
    let Ok(info) = serde_json::from_slice::<ObjectInfo>(data) else {
        return;
    };
    let json = serde_json::to_vec(&info).expect("a decoded ObjectInfo encodes");
    let again: ObjectInfo = serde_json::from_slice(&json).expect("an encoded ObjectInfo decodes");
    assert_eq!(again, info);
});
