//! Pooled native (off-heap) buffers: what Netty's `PooledByteBufAllocator` gives a Java
//! server, over jemalloc-style arenas.
//!
//! Servers move I/O buffers out of the collected heap (the collector never copies or scans
//! them) and pool them, because mapping native memory is slow (an `mmap`, a page fault per
//! page touched, a `munmap` and a TLB shootdown). The pool maps memory in chunks and hands out
//! slots of power-of-two size classes:
//!
//! - `size_class`: the classes (512 B .. a quarter chunk; larger buffers are unpooled);
//! - `chunk`: a mapping from the OS carved into slots of one class;
//! - `arena`: the chunks of a share of the threads behind one lock (round-robin assignment);
//! - `pool_config`: [`PoolConfig`], how a pool is laid out and what it checks;
//! - `shared`: what every handle and buffer of a pool shares (the arenas, the counts);
//! - `thread_cache`: per-thread caches of free slots (no lock on a hit);
//! - `memory`: a buffer's memory, taken from and given back through the thread's cache;
//! - `counters`: the hot counters, per thread (a load and a store, no locked instruction);
//! - [`PooledBuffer`] (`buffer`): the handle, with Netty's reference count
//!   (`retain`/`release`) and bounds-checked copying accessors;
//! - [`NativePool`] (`pool`): allocation, [`PoolStats`], the registry that
//!   memory reports read ([`registered_pools`]);
//! - `leak_detector`: Netty's `ResourceLeakDetector` (off / sampled / paranoid);
//! - [`NativeError`] (`error`).
//!
//! ```
//! use gc_runtime::native::{NativePool, PoolConfig};
//! let pool = NativePool::new(PoolConfig::new().name("io")).unwrap();
//! let buf = pool.allocate(1500).unwrap();          // a 2 KiB slot
//! buf.write(0, b"hello").unwrap();
//! let mut out = [0u8; 5];
//! buf.read(0, &mut out).unwrap();
//! assert_eq!(&out, b"hello");
//! assert!(buf.release().unwrap());                 // count 0: back in the pool
//! assert!(buf.read(0, &mut out).is_err());         // use after release: an error
//! ```
//!
//! A pool is usable on its own, as above. Tied to the collector, a buffer gets a heap object
//! as its owner (`Scope::alloc_pooled`, `Scope::alloc_direct`), whose cleaner gives the memory
//! back when the owner dies unreleased.

mod arena;
mod buffer;
mod chunk;
mod counters;
mod error;
mod leak_detector;
mod memory;
mod pool;
mod pool_config;
mod shared;
mod size_class;
mod thread_cache;

pub use buffer::PooledBuffer;
pub use error::NativeError;
pub use leak_detector::{LeakDetection, LeakRecord};
pub use pool::{registered_pools, NativePool, PoolStats, SizeClassStats};
pub use pool_config::{PoolConfig, MAX_BUFFER_SIZE_LIMIT};
