//! What a run costs the process: context switches and CPU time from `getrusage`, the figures
//! that stay stable on a noisy machine where wall times do not.

use std::time::Duration;

/// The process's counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Voluntary context switches: a thread gave up the CPU to wait (a park, a blocking read).
    pub voluntary: u64,
    /// Involuntary context switches: a thread was preempted.
    pub involuntary: u64,
    /// User plus system CPU time of every thread.
    pub cpu: Duration,
}

impl Usage {
    /// The counters of the whole process now (every thread; not child processes).
    pub fn now() -> std::io::Result<Usage> {
        // `getrusage` has no safe wrapper in std; libc is the binding every Rust crate uses.
        let mut raw = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `raw` is a valid, writable `rusage`; RUSAGE_SELF is a valid `who`.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, raw.as_mut_ptr()) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: getrusage returned 0, so it filled the struct.
        #[allow(unsafe_code)]
        let raw = unsafe { raw.assume_init() };
        let time = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        Ok(Usage {
            voluntary: u64::try_from(raw.ru_nvcsw).unwrap_or(0),
            involuntary: u64::try_from(raw.ru_nivcsw).unwrap_or(0),
            cpu: time(raw.ru_utime) + time(raw.ru_stime),
        })
    }

    /// What happened between `self` and `later`, divided by `operations`: voluntary switches,
    /// involuntary switches and CPU microseconds per operation.
    pub fn per_op_until(&self, later: &Usage, operations: usize) -> [f64; 3] {
        let ops = operations.max(1) as f64;
        [
            later.voluntary.saturating_sub(self.voluntary) as f64 / ops,
            later.involuntary.saturating_sub(self.involuntary) as f64 / ops,
            later.cpu.saturating_sub(self.cpu).as_secs_f64() * 1e6 / ops,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_shows_up_as_cpu_time_and_a_sleep_as_a_switch() {
        let before = Usage::now().unwrap();
        // Spin until this thread has had 30 ms of CPU by its own clock, not 30 ms of wall time:
        // on a loaded machine wall time passes without the CPU (the test once saw 6.8 ms).
        let spun = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - spun < Duration::from_millis(30) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        std::thread::sleep(Duration::from_millis(1));
        let after = Usage::now().unwrap();
        let [voluntary, _, cpu_us] = before.per_op_until(&after, 1);
        assert!(voluntary >= 1.0, "the sleep gave up the CPU");
        assert!(cpu_us >= 10_000.0, "the loop ran {cpu_us} µs");
        let [_, _, per_op] = before.per_op_until(&after, 10);
        assert!((per_op - cpu_us / 10.0).abs() < 1e-6);
    }

    /// The calling thread's CPU time, a clock apart from `getrusage`.
    fn thread_cpu() -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        Duration::new(
            u64::try_from(ts.tv_sec).unwrap_or(0),
            u32::try_from(ts.tv_nsec).unwrap_or(0),
        )
    }
}
