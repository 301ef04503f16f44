//! The machine's floor for a pause: how much time a thread loses *while it holds its CPU*.
//!
//! A pause's time to safepoint is the time until every mutator reaches its next poll, and the
//! driver sees it. A run's report already splits off the part a mutator spent runnable without
//! a CPU (the kernel's run delay, which the guest's scheduler counts). What no per-thread
//! counter shows is time lost by a thread that never left its CPU: an interrupt handled on that
//! CPU (a timer tick, an inter-processor interrupt, a device), charged to the thread as its own
//! CPU time when the kernel does not account interrupt time apart, and, in a virtual machine,
//! time the hypervisor gave the virtual CPU's physical one to someone else (*steal*), which the
//! guest cannot see at all. A poll a few hundred nanoseconds away then arrives tens of
//! microseconds late, and a pause whose request falls into such a gap on the mutator's CPU, or
//! on the driver's, waits for it.
//!
//! The probe spins one thread per chosen CPU, pinned there, reading the monotonic clock in a
//! tight loop (tens of nanoseconds a round). Any two consecutive readings further apart than
//! [`GAP_NS`] are a gap. A gap across which the thread's count of timeslices (the third field
//! of `/proc/thread-self/schedstat`) changed was the scheduler's (another thread ran) and is
//! counted apart; the others are time lost on the CPU, split by whether the thread's CPU
//! clock (`CLOCK_THREAD_CPUTIME_ID`) advanced over them: advanced is interrupt handling
//! charged to the thread (in a virtual machine, with the host's own handling of the
//! interrupt, which the guest sees as its time), not advanced is time the guest kernel knew
//! it could not give it (steal, where the kernel accounts it;
//! `CONFIG_PARAVIRT_TIME_ACCOUNTING`). The `cpu-probe` binary
//! prints the figures; the book's *Reading the reports* sets them beside the pauses' tails.
//!
//! ZGC has no such probe; HotSpot's own safepoint statistics (`-Xlog:safepoint`) face the same
//! noise on a virtual machine and cannot tell it apart either.

use gc_runtime::cpu_time::thread_cpu_ns;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

/// Two clock readings further apart than this are a gap (20 µs: a round of the loop takes
/// tens of nanoseconds, and a cache miss or a TLB miss under a microsecond).
pub const GAP_NS: u64 = 20_000;

/// The bounds (µs) the gaps lost on the CPU are counted under.
pub const BOUNDS_US: [u64; 4] = [50, 100, 1_000, u64::MAX];

/// What one CPU's spinning thread saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuProbe {
    /// The CPU probed.
    pub cpu: usize,
    /// How long the thread spun.
    pub spun_ns: u64,
    /// Gaps lost on the CPU, by bound: `counts[i]` gaps of at most [`BOUNDS_US`]`[i]` µs (and
    /// more than the bound before; the first from [`GAP_NS`]).
    pub counts: [u64; 4],
    /// Their sum.
    pub lost_ns: u64,
    /// The longest of them.
    pub longest_ns: u64,
    /// Of `lost_ns`, the part the thread's CPU clock did not advance over (steal).
    pub not_charged_ns: u64,
    /// Gaps across which the thread was switched out (another thread ran): how many.
    pub switched: u64,
    /// The longest of those.
    pub switched_longest_ns: u64,
}

impl CpuProbe {
    /// Count one gap of `gap_ns` (at least [`GAP_NS`]); `switched` if the thread's timeslice
    /// count changed across it, `charged_ns` how far its CPU clock advanced over it.
    pub fn add_gap(&mut self, gap_ns: u64, switched: bool, charged_ns: u64) {
        if switched {
            self.switched += 1;
            self.switched_longest_ns = self.switched_longest_ns.max(gap_ns);
            return;
        }
        let us = gap_ns / 1000;
        let i = BOUNDS_US
            .iter()
            .position(|&b| us <= b)
            .unwrap_or(BOUNDS_US.len() - 1);
        self.counts[i] += 1;
        self.lost_ns += gap_ns;
        self.longest_ns = self.longest_ns.max(gap_ns);
        self.not_charged_ns += gap_ns.saturating_sub(charged_ns);
    }

    /// Gaps lost on the CPU per second of spinning, of more than `us` µs (one of
    /// [`BOUNDS_US`] below the last, or 0 for every gap).
    pub fn per_second_over(&self, us: u64) -> f64 {
        let n: u64 = if us == 0 {
            self.counts.iter().sum()
        } else {
            let from = BOUNDS_US.iter().position(|&b| b == us).map_or(0, |i| i + 1);
            self.counts[from..].iter().sum()
        };
        n as f64 / (self.spun_ns.max(1) as f64 / 1e9)
    }

    /// The share of the spinning time lost on the CPU.
    pub fn lost_share(&self) -> f64 {
        self.lost_ns as f64 / self.spun_ns.max(1) as f64
    }
}

/// Pin the calling thread to `cpu`.
fn pin_to(cpu: usize) -> Result<(), String> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!(
            "CPU {cpu} is beyond the largest CPU number this system supports"
        ));
    }
    // SAFETY: an all-zero `cpu_set_t` is the empty set, a valid value of this plain C struct.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE (checked above), so CPU_SET stays inside `set`.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed, read for the duration of the
    // call; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(format!(
            "cannot run on CPU {cpu} ({}); give CPUs this process may use (see `taskset -p $$`)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// The calling thread's timeslice count (`/proc/thread-self/schedstat`'s third field).
fn timeslices(f: &File) -> Option<u64> {
    let mut buf = [0u8; 96];
    let n = f.read_at(&mut buf, 0).ok()?;
    std::str::from_utf8(&buf[..n])
        .ok()?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// Spin on `cpu` for `duration`, pinned there, and count the gaps (see the module
/// documentation). Fails if the thread cannot be pinned or the kernel keeps no schedstat.
pub fn probe_cpu(cpu: usize, duration: Duration) -> Result<CpuProbe, String> {
    pin_to(cpu)?;
    let schedstat = File::open("/proc/thread-self/schedstat").map_err(|e| {
        format!("cannot read /proc/thread-self/schedstat ({e}): the kernel keeps no scheduler statistics (CONFIG_SCHED_INFO)")
    })?;
    let mut slices =
        timeslices(&schedstat).ok_or("/proc/thread-self/schedstat has no timeslice count")?;
    let mut r = CpuProbe {
        cpu,
        ..CpuProbe::default()
    };
    let start = Instant::now();
    let mut last = start;
    let mut last_cpu = thread_cpu_ns();
    let mut rounds = 0u64;
    loop {
        let now = Instant::now();
        let gap = now.duration_since(last).as_nanos() as u64;
        if gap > GAP_NS {
            let cpu_now = thread_cpu_ns();
            let s = timeslices(&schedstat).unwrap_or(slices);
            // The CPU clock was read at most 256 rounds (a few microseconds) before the gap
            // began, so `charged` may include those; it is capped at the gap.
            let charged = cpu_now.saturating_sub(last_cpu).min(gap);
            r.add_gap(gap, s != slices, charged);
            slices = s;
            last_cpu = thread_cpu_ns();
            last = Instant::now();
        } else {
            last = now;
        }
        rounds += 1;
        if rounds.is_multiple_of(256) {
            // Reading the CPU clock is a system call (under a microsecond): not a gap.
            last_cpu = thread_cpu_ns();
            last = Instant::now();
            if last.duration_since(start) >= duration {
                break;
            }
        }
    }
    r.spun_ns = start.elapsed().as_nanos() as u64;
    Ok(r)
}

/// [`probe_cpu`] on each of `cpus` at once, one thread each, for `duration`.
pub fn probe_cpus(cpus: &[usize], duration: Duration) -> Result<Vec<CpuProbe>, String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&c| s.spawn(move || probe_cpu(c, duration)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| "a probe thread panicked".to_string())?
            })
            .collect()
    })
}

/// The CPUs this process may run on, in order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero `cpu_set_t` is a valid value of this plain C struct.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed; pid 0 is the calling
    // thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE, so CPU_ISSET reads inside `set`.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_counted_under_their_bounds_and_switches_apart() {
        let mut p = CpuProbe {
            spun_ns: 2_000_000_000,
            ..CpuProbe::default()
        };
        p.add_gap(30_000, false, 30_000); // an interrupt, charged
        p.add_gap(50_000, false, 0); // steal, at the first bound
        p.add_gap(70_000, false, 20_000);
        p.add_gap(400_000, false, 0);
        p.add_gap(6_000_000, false, 1_000_000);
        p.add_gap(9_000_000, true, 0); // switched out: apart
        assert_eq!(p.counts, [2, 1, 1, 1]);
        assert_eq!(p.lost_ns, 30_000 + 50_000 + 70_000 + 400_000 + 6_000_000);
        assert_eq!(p.longest_ns, 6_000_000);
        assert_eq!(p.not_charged_ns, 50_000 + 50_000 + 400_000 + 5_000_000);
        assert_eq!((p.switched, p.switched_longest_ns), (1, 9_000_000));
        assert_eq!(p.per_second_over(0), 2.5);
        assert_eq!(p.per_second_over(50), 1.5);
        assert_eq!(p.per_second_over(100), 1.0);
        assert_eq!(p.per_second_over(1_000), 0.5);
        assert!((p.lost_share() - 6_550_000.0 / 2e9).abs() < 1e-12);
    }

    #[test]
    fn a_short_probe_of_an_allowed_cpu_spins_that_long() {
        let cpu = allowed_cpus()[0];
        let p = probe_cpu(cpu, Duration::from_millis(50)).unwrap();
        assert_eq!(p.cpu, cpu);
        assert!(p.spun_ns >= 50_000_000, "spun {} ns", p.spun_ns);
        assert!(p.lost_ns <= p.spun_ns && p.not_charged_ns <= p.lost_ns);
    }

    #[test]
    fn a_cpu_beyond_the_system_is_refused() {
        let e = probe_cpu(libc::CPU_SETSIZE as usize + 1, Duration::from_millis(1)).unwrap_err();
        assert!(e.contains("beyond the largest CPU"), "{e}");
    }
}
