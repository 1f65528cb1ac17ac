//! Key-Value buckets (ADR-8) on JetStream streams, reserved for the Key-Value work.
