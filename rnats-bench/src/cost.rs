//! What a run costs the process: context switches and CPU time from `getrusage`, the figures
//! that stay stable on a noisy machine where wall times do not. And what it costs the server
//! ([`process_cpu`]), which tells a row bound by the server from one bound by the client.

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

/// The CPU time (user plus system, every thread, exited ones included) that process `pid` has
/// used so far: a nats-server on this machine, read around a run to see how busy the run kept
/// it. Linux only; elsewhere, and when the process is gone, an error.
#[cfg(target_os = "linux")]
pub fn process_cpu(pid: u32) -> std::io::Result<Duration> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "pid out of range"))?;
    // The process's CPU-time clock has nanoseconds; `/proc/PID/stat` counts 10 ms ticks, too
    // coarse for a run of a tenth of a second. libc is the only binding of these two calls.
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid, writable clockid_t.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if rc != 0 {
        // This call returns the error number instead of setting errno.
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and `clock` came from clock_getcpuclockid.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    ))
}

/// The CPU time of another process: read on Linux only.
#[cfg(not(target_os = "linux"))]
pub fn process_cpu(_pid: u32) -> std::io::Result<Duration> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "another process's CPU time is read on Linux only",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn another_process_cpu_time_grows_while_it_works_and_is_an_error_once_it_is_gone() {
        // A child that spins until its input closes, so that its CPU time is its own work.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while read -r line; do :; done; while :; do :; done"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let start = process_cpu(pid).unwrap();
        drop(child.stdin.take());
        // Wait for 20 ms of the child's CPU time, by the child's own clock (a loaded machine
        // gives it the CPU late, not less).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut used = Duration::ZERO;
        while used < Duration::from_millis(20) && std::time::Instant::now() < deadline {
            used = process_cpu(pid).unwrap() - start;
            std::thread::yield_now();
        }
        assert!(used >= Duration::from_millis(20), "the child used {used:?}");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(process_cpu(pid).is_err(), "a reaped process has no clock");
    }

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
