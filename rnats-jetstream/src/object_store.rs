//! Object Store buckets (ADR-20) on JetStream streams, reserved for the Object Store work.
