//! The synchronization primitives the runtime's handshake protocols are written against.
//!
//! The safepoint handshake ([`crate::threads::safepoint`]) and the forwarding page retain/release
//! protocol ([`crate::context::forwarding::Forwarding`]) are generic over [`Primitives`], a small
//! family of atomics plus a monitor (a mutex with two condition variables) and a back-off for
//! wait loops. The collector instantiates them with [`Std`] (`std` atomics, `parking_lot`'s
//! mutex and condvars, a short sleep); the model-checking tests
//! (`gc-runtime/tests/loom_protocols.rs`) instantiate the *same code* with `loom`'s types, so
//! loom explores the interleavings of the code that runs. This is the runtime's counterpart of
//! `gc_core::sync::AtomicWord`.

use std::ops::DerefMut;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

/// An atomic cell holding a `T`.
pub trait Atomic<T: Copy>: Send + Sync {
    fn new(v: T) -> Self;
    fn load(&self, order: Ordering) -> T;
    fn store(&self, v: T, order: Ordering);
    fn compare_exchange_weak(
        &self,
        current: T,
        new: T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<T, T>;
}

/// Which of a monitor's two condition variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    First,
    Second,
}

/// A mutex protecting a `T`, with two condition variables.
pub trait Monitor<T>: Send + Sync {
    type Guard<'a>: DerefMut<Target = T>
    where
        Self: 'a;
    fn new(v: T) -> Self;
    fn lock(&self) -> Self::Guard<'_>;
    /// Release the lock, wait for a notification on `c`, re-acquire the lock.
    fn wait<'a>(&'a self, c: Cond, g: Self::Guard<'a>) -> Self::Guard<'a>;
    /// As [`Self::wait`], but return after `limit` at the latest. Only for a diagnostic's
    /// deadline: a protocol must be correct if the wait never times out (a model checker's
    /// never does), so every caller tests its condition again either way.
    fn wait_at_most<'a>(&'a self, c: Cond, g: Self::Guard<'a>, limit: Duration) -> Self::Guard<'a>;
    fn notify_all(&self, c: Cond);
}

/// A family of primitives: the collector's ([`Std`]) or a model checker's.
pub trait Primitives: Send + Sync + Sized + 'static {
    type AtomicBool: Atomic<bool>;
    type AtomicU8: Atomic<u8>;
    type AtomicI64: Atomic<i64>;
    type AtomicU64: Atomic<u64>;
    type Monitor<T: Send>: Monitor<T>;
    /// One round of a wait loop that has nothing to block on (a model checker yields here).
    fn backoff();
    /// Before blocking on a condition variable for something that usually happens within
    /// microseconds: poll `done` for at most `limit` and return whether it became true. The
    /// caller blocks as before if not (and must check its condition again under its lock
    /// either way). A model checker evaluates `done` once: it explores the interleavings, a
    /// spin adds none.
    fn spin_until(limit: Duration, done: impl FnMut() -> bool) -> bool;
    /// A memory fence (`std::sync::atomic::fence`). The safepoint's Dekker handshake uses
    /// `SeqCst` fences between its store and its load: loom models `SeqCst` *fences*
    /// exactly but treats `SeqCst` loads and stores as acquire/release only.
    fn fence(order: Ordering);
    /// How long ago `start` was, for a diagnostic's deadline (the safepoint timeout). A
    /// model checker's clock stands still (zero): a real clock would make the path a model
    /// takes depend on how fast the machine explores it, which the checker refuses ("is the
    /// model fully deterministic?") when a loaded machine crosses the deadline in one of
    /// its executions; and no protocol may depend on a timeout anyway.
    fn waited(start: std::time::Instant) -> Duration;
}

/// The primitives the collector runs with.
pub struct Std;

/// `Atomic<T>` for an atomic type with the std atomics' methods (std's and loom's).
macro_rules! impl_atomic {
    ($t:ty, $a:ty) => {
        impl Atomic<$t> for $a {
            #[inline(always)]
            fn new(v: $t) -> Self {
                <$a>::new(v)
            }
            #[inline(always)]
            fn load(&self, order: Ordering) -> $t {
                <$a>::load(self, order)
            }
            #[inline(always)]
            fn store(&self, v: $t, order: Ordering) {
                <$a>::store(self, v, order)
            }
            #[inline(always)]
            fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                <$a>::compare_exchange_weak(self, current, new, success, failure)
            }
        }
    };
}

impl_atomic!(bool, AtomicBool);
impl_atomic!(u8, AtomicU8);
impl_atomic!(i64, AtomicI64);
impl_atomic!(u64, AtomicU64);

/// `parking_lot`'s mutex with two condvars.
pub struct StdMonitor<T> {
    lock: parking_lot::Mutex<T>,
    first: parking_lot::Condvar,
    second: parking_lot::Condvar,
}

impl<T> StdMonitor<T> {
    fn cv(&self, c: Cond) -> &parking_lot::Condvar {
        match c {
            Cond::First => &self.first,
            Cond::Second => &self.second,
        }
    }
}

impl<T: Send> Monitor<T> for StdMonitor<T> {
    type Guard<'a>
        = parking_lot::MutexGuard<'a, T>
    where
        T: 'a;
    fn new(v: T) -> Self {
        StdMonitor {
            lock: parking_lot::Mutex::new(v),
            first: parking_lot::Condvar::new(),
            second: parking_lot::Condvar::new(),
        }
    }
    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        self.lock.lock()
    }
    fn wait<'a>(&'a self, c: Cond, mut g: Self::Guard<'a>) -> Self::Guard<'a> {
        self.cv(c).wait(&mut g);
        g
    }
    fn wait_at_most<'a>(
        &'a self,
        c: Cond,
        mut g: Self::Guard<'a>,
        limit: Duration,
    ) -> Self::Guard<'a> {
        let _ = self.cv(c).wait_for(&mut g, limit);
        g
    }
    fn notify_all(&self, c: Cond) {
        self.cv(c).notify_all();
    }
}

impl Primitives for Std {
    type AtomicBool = AtomicBool;
    type AtomicU8 = AtomicU8;
    type AtomicI64 = AtomicI64;
    type AtomicU64 = AtomicU64;
    type Monitor<T: Send> = StdMonitor<T>;
    fn backoff() {
        // Waits on this path last a few microseconds (a mutator copying one object): sleep
        // briefly rather than spin, which on 2 cores would cost a scheduler tick.
        std::thread::sleep(Duration::from_micros(20));
    }
    fn spin_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
        // A thread blocked on a futex is woken by the OS tens of microseconds after the
        // notify (longer when its core had gone idle, as a virtual machine's does); a pause
        // that does no per-root work lasts a few. Bounded, so that a spinner whose partner
        // is off its core gives the core back soon; and it yields between rounds, because
        // the partner may be waiting for this very core (the scheduler can leave the driver
        // and a mutator on one core for a while): a yield lets it run at once, and costs a
        // system call when nobody else is runnable here.
        let start = std::time::Instant::now();
        loop {
            for _ in 0..64 {
                if done() {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= limit {
                return done();
            }
            std::thread::yield_now();
        }
    }
    fn waited(start: std::time::Instant) -> Duration {
        start.elapsed()
    }
    #[inline(always)]
    fn fence(order: Ordering) {
        std::sync::atomic::fence(order)
    }
}

/// loom's atomics, mutex and condvars as [`Primitives`], so the loom models check the
/// protocols' own code (the `loom` feature, which this crate's tests turn on).
#[cfg(feature = "loom")]
pub mod loom {
    use super::{Atomic, Cond, Monitor, Primitives};
    use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8};
    use loom::sync::{Condvar, Mutex, MutexGuard};
    use std::sync::atomic::Ordering;

    /// loom's atomics, mutex and condvars as the runtime's primitives.
    pub struct Loom;

    impl_atomic!(bool, AtomicBool);
    impl_atomic!(u8, AtomicU8);
    impl_atomic!(i64, AtomicI64);
    impl_atomic!(u64, AtomicU64);

    /// loom's mutex with two condvars.
    pub struct LoomMonitor<T> {
        lock: Mutex<T>,
        first: Condvar,
        second: Condvar,
    }

    impl<T> LoomMonitor<T> {
        fn cv(&self, c: Cond) -> &Condvar {
            match c {
                Cond::First => &self.first,
                Cond::Second => &self.second,
            }
        }
    }

    impl<T: Send> Monitor<T> for LoomMonitor<T> {
        type Guard<'a>
            = MutexGuard<'a, T>
        where
            Self: 'a;
        fn new(v: T) -> Self {
            LoomMonitor {
                lock: Mutex::new(v),
                first: Condvar::new(),
                second: Condvar::new(),
            }
        }
        fn lock(&self) -> Self::Guard<'_> {
            self.lock.lock().unwrap()
        }
        fn wait<'a>(&'a self, c: Cond, g: Self::Guard<'a>) -> Self::Guard<'a> {
            self.cv(c).wait(g).unwrap()
        }
        /// Never times out: the models check that no protocol depends on a timeout.
        fn wait_at_most<'a>(
            &'a self,
            c: Cond,
            g: Self::Guard<'a>,
            _limit: std::time::Duration,
        ) -> Self::Guard<'a> {
            self.wait(c, g)
        }
        fn notify_all(&self, c: Cond) {
            self.cv(c).notify_all()
        }
    }

    impl Primitives for Loom {
        type AtomicBool = AtomicBool;
        type AtomicU8 = AtomicU8;
        type AtomicI64 = AtomicI64;
        type AtomicU64 = AtomicU64;
        type Monitor<T: Send> = LoomMonitor<T>;
        fn backoff() {
            loom::thread::yield_now();
        }
        fn spin_until(_limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
            done()
        }
        fn fence(order: Ordering) {
            loom::sync::atomic::fence(order)
        }
        fn waited(_start: std::time::Instant) -> std::time::Duration {
            std::time::Duration::ZERO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_spin_polls_for_its_limit_then_gives_up() {
        let start = Instant::now();
        assert!(!Std::spin_until(Duration::from_millis(2), || false));
        assert!(start.elapsed() >= Duration::from_millis(2));
    }

    #[test]
    fn a_spin_returns_once_its_condition_holds() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1));
                flag.store(true, Ordering::SeqCst);
            })
        };
        let start = Instant::now();
        assert!(Std::spin_until(Duration::from_secs(60), || flag.load(Ordering::SeqCst)));
        assert!(start.elapsed() < Duration::from_secs(60));
        setter.join().unwrap();
    }
}
