//! Object bytes for the object-size axis, made as they are read: a probe can put an object
//! of gigabytes without holding it, so the peak memory it reports is the client's alone.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// `len` pseudo-random bytes (xorshift, so they do not compress to nothing), the same
/// sequence every time.
#[derive(Debug, Clone)]
pub struct PatternReader {
    state: u64,
    left: usize,
}

impl PatternReader {
    /// A reader of `len` bytes.
    pub fn new(len: usize) -> PatternReader {
        PatternReader {
            state: 0x9E37_79B9_7F4A_7C15,
            left: len,
        }
    }

    /// Fills `out` with the next bytes of the sequence.
    fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            chunk.copy_from_slice(&self.state.to_le_bytes()[..chunk.len()]);
        }
    }
}

impl AsyncRead for PatternReader {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let n = buf.remaining().min(this.left);
        // Whole words only until the end, so the sequence does not depend on read sizes.
        let n = if n < this.left { n - n % 8 } else { n };
        let out = buf.initialize_unfilled_to(n);
        this.fill(out);
        buf.advance(n);
        this.left -= n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn gives_exactly_len_bytes_the_same_whatever_the_read_sizes() {
        let mut whole = Vec::new();
        PatternReader::new(1001)
            .read_to_end(&mut whole)
            .await
            .unwrap();
        assert_eq!(whole.len(), 1001);
        let mut pieces = Vec::new();
        let mut reader = PatternReader::new(1001);
        let mut buf = [0u8; 13];
        loop {
            let n = reader.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            pieces.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pieces, whole);
        assert!(whole.iter().filter(|b| **b == 0).count() < 50);
    }
}
