//! How a pool is laid out and what it checks ([`PoolConfig`], Netty's allocator options:
//! chunk size, arenas, thread caches, the largest pooled size, leak detection), and the
//! checks of a configuration before a pool is built.

use super::error::NativeError;
use super::leak_detector::LeakDetection;
use serde::Serialize;

/// The largest `max_buffer_size` a pool accepts (1 TiB).
pub const MAX_BUFFER_SIZE_LIMIT: usize = 1 << 40;

/// How a pool is laid out and what it checks.
#[derive(Clone, Debug, Serialize)]
pub struct PoolConfig {
    /// Shown in leak reports and memory reports.
    pub name: String,
    /// Arenas (1..=64); threads are assigned to them round-robin. Default: the number of
    /// CPUs, at most 8.
    pub arenas: usize,
    /// Bytes of one chunk (a power of two, 64 KiB ..= 1 GiB; default 2 MiB). The largest
    /// pooled buffer is a quarter of a chunk; larger ones are unpooled.
    pub chunk_size: usize,
    /// The smallest size class (a power of two, 64 B ..= a quarter of a chunk; default 512 B).
    pub min_class: usize,
    /// The largest buffer the pool hands out (1 ..= 1 TiB; default 1 GiB): a larger request
    /// is an error rather than an attempt to map it.
    pub max_buffer_size: usize,
    /// Keep per-thread caches of free slots (default on).
    pub thread_cache: bool,
    /// Which buffers the leak detector tracks (default one in 128, as Netty's `SIMPLE`).
    pub leak_detection: LeakDetection,
    /// Print each leak report on stderr (default on).
    pub log_leaks: bool,
    /// List the pool in [`super::registered_pools`] for memory reports (default on).
    pub register: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::new()
    }
}

impl PoolConfig {
    /// The defaults.
    pub fn new() -> Self {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        PoolConfig {
            name: "native".into(),
            arenas: cpus.min(8),
            chunk_size: 2 << 20,
            min_class: 512,
            max_buffer_size: 1 << 30,
            thread_cache: true,
            leak_detection: LeakDetection::Sampled(128),
            log_leaks: true,
            register: true,
        }
    }
    pub fn name(mut self, name: &str) -> Self {
        self.name = name.into();
        self
    }
    pub fn arenas(mut self, n: usize) -> Self {
        self.arenas = n;
        self
    }
    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.chunk_size = bytes;
        self
    }
    pub fn min_class(mut self, bytes: usize) -> Self {
        self.min_class = bytes;
        self
    }
    pub fn max_buffer_size(mut self, bytes: usize) -> Self {
        self.max_buffer_size = bytes;
        self
    }
    pub fn thread_cache(mut self, on: bool) -> Self {
        self.thread_cache = on;
        self
    }
    pub fn leak_detection(mut self, level: LeakDetection) -> Self {
        self.leak_detection = level;
        self
    }
    pub fn log_leaks(mut self, on: bool) -> Self {
        self.log_leaks = on;
        self
    }
    pub fn register(mut self, on: bool) -> Self {
        self.register = on;
        self
    }

    /// The largest pooled buffer.
    pub fn max_pooled_size(&self) -> usize {
        self.chunk_size / 4
    }

    /// Check every field; the message names the field and its range.
    pub fn validate(&self) -> Result<(), NativeError> {
        let bad = |m: String| Err(NativeError::Config(m));
        if !(1..=64).contains(&self.arenas) {
            return bad(format!("arenas must be 1..=64, got {}", self.arenas));
        }
        if !self.chunk_size.is_power_of_two()
            || !((64 << 10)..=(1 << 30)).contains(&self.chunk_size)
        {
            return bad(format!(
                "chunk_size must be a power of two from 64 KiB to 1 GiB, got {}",
                self.chunk_size
            ));
        }
        if !self.min_class.is_power_of_two()
            || !(64..=self.max_pooled_size()).contains(&self.min_class)
        {
            return bad(format!(
                "min_class must be a power of two from 64 to chunk_size / 4 ({}), got {}",
                self.max_pooled_size(),
                self.min_class
            ));
        }
        if !(1..=MAX_BUFFER_SIZE_LIMIT).contains(&self.max_buffer_size) {
            return bad(format!(
                "max_buffer_size must be 1 ..= {MAX_BUFFER_SIZE_LIMIT}, got {}",
                self.max_buffer_size
            ));
        }
        if self.leak_detection == LeakDetection::Sampled(0) {
            return bad("leak_detection Sampled(n) needs n >= 1".into());
        }
        Ok(())
    }
}
