//! Fuzzes header block decoding (`HeaderBlock::decode`, the block of every `HMSG`). A block
//! that decodes must survive encode -> decode with the same headers in the same order.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rnats_proto::{HeaderBlock, encode_headers, encoded_len};

fuzz_target!(|data: &[u8]| {
    let Ok(block) = HeaderBlock::decode(data) else {
        return;
    };
    let mut encoded = BytesMut::new();
    encode_headers(&mut encoded, &block.headers);
    assert_eq!(encoded.len(), encoded_len(&block.headers));
    let again = HeaderBlock::decode(&encoded).expect("an encoded header map decodes");
    assert_eq!(again.headers, block.headers);
    assert!(
        again.headers.iter().eq(block.headers.iter()),
        "header order changed"
    );
    // Clients never send a status line, so only the headers travel.
    assert_eq!((again.status, again.description), (None, None));
});
