//! The crate's private decoders of server bytes, reachable for the fuzz targets in `fuzz/`
//! and for regression tests. Not part of the API: nothing here is stable.

/// Reads `server_bytes`, the frames a WebSocket server sends after the upgrade, through the
/// client's WebSocket reader in `read_size`-byte reads, and returns the NATS bytes it yields
/// and the error that ended the stream, if any (as text: the frame codec's errors are
/// tokio-websockets' own).
#[cfg(feature = "websockets")]
pub fn websocket_read(server_bytes: &[u8], read_size: usize) -> (Vec<u8>, Option<String>) {
    crate::websocket::read_frames(server_bytes, read_size)
}
