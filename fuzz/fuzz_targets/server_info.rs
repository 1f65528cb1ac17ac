//! Fuzzes the INFO JSON a server sends (`ServerInfo`), on its own and through the parser's
//! INFO line. A document that decodes must survive encode -> decode unchanged.

#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use rnats_proto::{Parser, ParserLimits, ServerInfo, ServerOp};

fuzz_target!(|data: &[u8]| {
    let direct = serde_json::from_slice::<ServerInfo>(data);
    if let Ok(info) = &direct {
        let json = serde_json::to_vec(info).expect("a decoded ServerInfo encodes");
        let again: ServerInfo =
            serde_json::from_slice(&json).expect("an encoded ServerInfo decodes");
        assert_eq!(&again, info);
    }

    // The same bytes as an INFO line, as the handshake and every later INFO reach them.
    let mut line = BytesMut::from(&b"INFO "[..]);
    line.extend_from_slice(data);
    line.extend_from_slice(b"\r\n");
    let mut parser = Parser::new(ParserLimits::default());
    if let Ok(Some(ServerOp::Info(info))) = parser.decode(&mut line)
        && !data.contains(&b'\n')
    {
        let direct = direct.expect("the parser accepted what serde_json refuses");
        assert_eq!(*info, direct);
    }
});
