//! `lru-cache`: a bounded key-value cache that lives entirely in the heap, under random
//! requests.
//!
//! The cache is a hash index and a recency list. The index is one bucket-array object of
//! reference slots (a power of two of them, at least one per expected entry), each the head of
//! a chain of entries. An entry is an object with four reference slots (previous and next in
//! the recency list, next in its bucket chain, the value) and 16 raw bytes (the key as a
//! little-endian u64 and the entry's weight); a value is a byte-array object of
//! `--min-value-bytes`..=`--max-value-bytes` (uniform), stamped with its key at both ends. The
//! recency list is circular around a sentinel entry, most recent first. The cache is bounded
//! by bytes: the heap bytes of its entries and values stay within this thread's share of the
//! live-set target minus the bucket array, and a put evicts least recently used entries until
//! they do. Set-up fills the cache with keys 0, 1, 2, ... until the next value would not fit;
//! the key space is then that many entries divided by `--hit-rate`, so that uniformly random
//! keys hit about that often. One operation is one request on a uniformly random key: a get
//! (with probability `--get-fraction`) looks the key up, moves a hit to the front and copies
//! its value out (verifying the stamps); a miss is filled read-through, as a cache-aside
//! client would, with a new value; a put stores a new value for the key (replacing or
//! inserting). Every request's latency is recorded: from the moment it was due when
//! `--ops-per-sec` throttles the thread (so stalls and pauses count for every request they
//! delayed: no coordinated omission), else from its start.

use crate::workload::LiveOption;
use crate::arg_parsers::parse_unit_interval;
use clap::Args;
use serde::{Deserialize, Serialize};
use crate::ctx::Ctx;
use crate::pacer::Pacer;
use crate::workload::{object_bytes, ThreadOutcome, Workload};
use crate::latency::LatencyHistogram;
use gc_runtime::{Local, Mutator, ObjRef, OutOfMemory, Scope};
use rand::Rng;

/// The defaults of the options, each written once and used by both `Default` and clap.
pub mod defaults {
    /// Target fraction of gets that hit.
    pub const HIT_RATE: f64 = 0.9;
    /// Fraction of requests that are gets (the rest are puts).
    pub const GET_FRACTION: f64 = 0.9;
    /// Smallest value size.
    pub const MIN_VALUE_BYTES: u64 = 64;
    /// Largest value size.
    pub const MAX_VALUE_BYTES: u64 = 4096;
    /// Request rate limit; 0 = unthrottled.
    pub const OPS_PER_SEC: u64 = 0;
}

/// `lru-cache` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LruCacheParams {
    /// Target fraction of gets that hit (sets the key space relative to the capacity).
    #[arg(long, value_name = "F", value_parser = parse_unit_interval,
          default_value_t = defaults::HIT_RATE)]
    pub hit_rate: f64,
    /// Fraction of requests that are gets; the rest are puts.
    #[arg(long, value_name = "F", value_parser = parse_unit_interval,
          default_value_t = defaults::GET_FRACTION)]
    pub get_fraction: f64,
    /// Smallest value size.
    #[arg(long, value_name = "BYTES", default_value_t = defaults::MIN_VALUE_BYTES)]
    pub min_value_bytes: u64,
    /// Largest value size.
    #[arg(long, value_name = "BYTES", default_value_t = defaults::MAX_VALUE_BYTES)]
    pub max_value_bytes: u64,
    /// Requests per second per thread; 0 = as fast as possible (latency is then measured
    /// without a schedule and not corrected for coordinated omission).
    #[arg(long, value_name = "N", default_value_t = defaults::OPS_PER_SEC)]
    pub ops_per_sec: u64,
}

impl Default for LruCacheParams {
    fn default() -> Self {
        LruCacheParams {
            hit_rate: defaults::HIT_RATE,
            get_fraction: defaults::GET_FRACTION,
            min_value_bytes: defaults::MIN_VALUE_BYTES,
            max_value_bytes: defaults::MAX_VALUE_BYTES,
            ops_per_sec: defaults::OPS_PER_SEC,
        }
    }
}

/// The `lru-cache` workload.
pub struct LruCacheWorkload;

impl Workload for LruCacheWorkload {
    const NAME: &'static str = "lru-cache";
    const SUMMARY: &'static str = "A bounded map (hash index + recency list in the heap) with \
         random get/put";
    const ABOUT: &'static str = "Run lru-cache alone: a bounded map (hash index + recency list, \
         all in the heap) under random gets and puts; reports request latency percentiles too";
    const LIVE_OPTION: Option<LiveOption> = Some(LiveOption {
        long: "live-mb",
        help: "Cache capacity in MiB of values [default: --live-fraction of the heap]",
    });
    const HAS_REQUESTS: bool = true;
    type Params = LruCacheParams;

    fn validate(p: &LruCacheParams) -> Result<(), String> {
        if p.min_value_bytes == 0 || p.min_value_bytes > p.max_value_bytes {
            return Err(format!(
                "--min-value-bytes {} and --max-value-bytes {}: need 0 < min ≤ max",
                p.min_value_bytes, p.max_value_bytes
            ));
        }
        Ok(())
    }

    fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &LruCacheParams) -> Result<ThreadOutcome, String> {
        run(ctx, m, p)
    }
}

/// Shape ids.
const ENTRY: u32 = 0x21;
const VALUE: u32 = 0x22;
const BUCKETS: u32 = 0x23;

/// Reference slots of an entry.
const PREV: usize = 0;
const NEXT: usize = 1;
const CHAIN: usize = 2;
const VAL: usize = 3;
const ENTRY_REFS: u32 = 4;
/// Raw bytes of an entry: the key, then the entry's weight.
const KEY_AT: usize = 0;
const WEIGHT_AT: usize = 8;
const ENTRY_RAW: usize = 16;

/// Heap bytes of an entry object (without its value).
pub fn entry_bytes() -> u64 {
    object_bytes(ENTRY_REFS as u64, ENTRY_RAW as u64)
}

/// Most bucket slots the index gets (one object of 2 GiB).
const MAX_BUCKETS: u64 = 1 << 28;

/// What an entry with a value of `value_bytes` costs the cache's budget: both objects.
pub fn entry_weight(value_bytes: u64) -> u64 {
    entry_bytes() + object_bytes(0, value_bytes)
}

/// A 64-bit mix (splitmix64's finalizer): spreads sequential keys over the buckets.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn corrupt(what: String) -> String {
    format!("lru-cache: {what}: the heap lost or mixed up objects")
}

fn oom(e: OutOfMemory) -> String {
    format!("lru-cache: {e}")
}

/// Remove `e` from the recency list.
fn unlink(e: ObjRef<'_>) -> Result<(), String> {
    match (e.load(PREV), e.load(NEXT)) {
        (Some(p), Some(n)) => {
            p.store(NEXT, Some(n));
            n.store(PREV, Some(p));
            Ok(())
        }
        _ => Err(corrupt("an entry is not on the recency list".into())),
    }
}

/// Insert `e` at the front (most recent end) of the list around `sentinel`.
fn push_front(sentinel: ObjRef<'_>, e: ObjRef<'_>) -> Result<(), String> {
    let first = sentinel
        .load(NEXT)
        .ok_or_else(|| corrupt("the recency list is broken".into()))?;
    e.store(PREV, Some(sentinel));
    e.store(NEXT, Some(first));
    first.store(PREV, Some(e));
    sentinel.store(NEXT, Some(e));
    Ok(())
}

/// A byte-bounded LRU map in the heap, rooted in the scope `'s` it was created in. Requests
/// open their own nested scopes, so they can run in a loop without piling up handles.
pub struct LruCache<'s> {
    buckets: Local<'s>,
    sentinel: Local<'s>,
    mask: u64,
    budget: u64,
    bytes: u64,
    len: u64,
    evictions: u64,
}

impl<'s> LruCache<'s> {
    /// An empty cache whose entries and values may take `budget_bytes` of heap, indexed by
    /// `buckets` chains (rounded up to a power of two).
    pub fn new(s: &mut Scope<'s>, budget_bytes: u64, buckets: u64) -> Result<Self, OutOfMemory> {
        let n = buckets.clamp(1, MAX_BUCKETS).next_power_of_two();
        let bucket_array = s.alloc(BUCKETS, n as u32, 0)?;
        let sentinel = s.alloc(ENTRY, ENTRY_REFS, ENTRY_RAW)?;
        let o = s.get(sentinel);
        o.store(PREV, Some(o));
        o.store(NEXT, Some(o));
        Ok(LruCache {
            buckets: bucket_array,
            sentinel,
            mask: n - 1,
            budget: budget_bytes,
            bytes: 0,
            len: 0,
            evictions: 0,
        })
    }

    /// Number of entries.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes of the entries and values.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bound on [`Self::bytes`].
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Entries evicted so far.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Bucket slots of the index.
    pub fn buckets(&self) -> u64 {
        self.mask + 1
    }

    fn slot(&self, key: u64) -> usize {
        (mix(key) & self.mask) as usize
    }

    /// The entry of `key`, if cached.
    fn find<'a>(&self, s: &'a Scope<'_>, key: u64) -> Option<ObjRef<'a>> {
        let mut e = s.get(self.buckets).load(self.slot(key))?;
        loop {
            if e.read_u64(KEY_AT) == key {
                return Some(e);
            }
            e = e.load(CHAIN)?;
        }
    }

    /// A get: `Ok(true)` on a hit, after moving the entry to the front and copying its value
    /// into `out`.
    pub fn get(&mut self, s: &mut Scope<'_>, key: u64, out: &mut Vec<u8>) -> Result<bool, String> {
        let Some(e) = self.find(s, key) else {
            return Ok(false);
        };
        unlink(e)?;
        push_front(s.get(self.sentinel), e)?;
        let v = e
            .load(VAL)
            .ok_or_else(|| corrupt(format!("the entry of key {key} has no value")))?;
        out.resize(v.n_bytes(), 0);
        v.read_bytes(0, out);
        check_stamps(key, out)?;
        Ok(true)
    }

    /// A put: store a new value of `value_bytes` for `key` (replacing or inserting), make it
    /// the most recent entry, and evict least recently used entries while over budget.
    pub fn put(&mut self, s: &mut Scope<'_>, key: u64, value_bytes: usize) -> Result<(), String> {
        s.scope(|s| {
            let value = s.alloc(VALUE, 0, value_bytes).map_err(oom)?;
            stamp(s.get(value), key);
            let weight = entry_weight(value_bytes as u64);
            let entry = match self.find(s, key) {
                Some(e) => {
                    // Replace the value; the old one is garbage now.
                    self.bytes -= e.read_u64(WEIGHT_AT);
                    e.store(VAL, Some(s.get(value)));
                    unlink(e)?;
                    s.root(e)
                }
                None => {
                    let e = s.alloc(ENTRY, ENTRY_REFS, ENTRY_RAW).map_err(oom)?;
                    let o = s.get(e);
                    o.write_u64(KEY_AT, key);
                    o.store(VAL, Some(s.get(value)));
                    let buckets = s.get(self.buckets);
                    let slot = self.slot(key);
                    o.store(CHAIN, buckets.load(slot));
                    buckets.store(slot, Some(o));
                    self.len += 1;
                    e
                }
            };
            let e = s.get(entry);
            e.write_u64(WEIGHT_AT, weight);
            self.bytes += weight;
            push_front(s.get(self.sentinel), e)?;
            self.evict(s, e)
        })
    }

    /// Evict from the tail while over budget, never `keep` (the entry just put).
    fn evict(&mut self, s: &Scope<'_>, keep: ObjRef<'_>) -> Result<(), String> {
        let sentinel = s.get(self.sentinel);
        let buckets = s.get(self.buckets);
        while self.bytes > self.budget {
            let tail = sentinel
                .load(PREV)
                .ok_or_else(|| corrupt("the recency list is broken".into()))?;
            if tail.same(&sentinel) || tail.same(&keep) {
                break;
            }
            unlink(tail)?;
            let key = tail.read_u64(KEY_AT);
            let slot = self.slot(key);
            let next = tail.load(CHAIN);
            let mut p = buckets
                .load(slot)
                .ok_or_else(|| corrupt(format!("key {key} is listed but not indexed")))?;
            if p.same(&tail) {
                buckets.store(slot, next);
            } else {
                loop {
                    let n = p
                        .load(CHAIN)
                        .ok_or_else(|| corrupt(format!("key {key} is listed but not indexed")))?;
                    if n.same(&tail) {
                        p.store(CHAIN, next);
                        break;
                    }
                    p = n;
                }
            }
            self.bytes -= tail.read_u64(WEIGHT_AT);
            self.len -= 1;
            self.evictions += 1;
        }
        Ok(())
    }
}

/// Write `key` at both ends of a value (as far as it fits).
fn stamp(v: ObjRef<'_>, key: u64) {
    let n = v.n_bytes();
    let k = key.to_le_bytes();
    let head = n.min(8);
    v.write_bytes(0, &k[..head]);
    if n >= 16 {
        v.write_bytes(n - 8, &k);
    }
}

fn check_stamps(key: u64, value: &[u8]) -> Result<(), String> {
    let k = key.to_le_bytes();
    let n = value.len();
    let head = n.min(8);
    if value[..head] != k[..head] || (n >= 16 && value[n - 8..] != k) {
        return Err(corrupt(format!(
            "the value of key {key} ({n} bytes) carries another key's stamp"
        )));
    }
    Ok(())
}

/// The geometry the workload gives a cache for `live_bytes`: (budget bytes, bucket slots).
/// The bucket array gets one slot per expected entry (rounded up to a power of two) and the
/// entries and values the rest.
pub fn geometry(live_bytes: u64, min_value_bytes: u64, max_value_bytes: u64) -> (u64, u64) {
    let mean = entry_weight((min_value_bytes + max_value_bytes) / 2);
    let expected = (live_bytes / (mean + 8)).max(1);
    let buckets = expected.clamp(1, MAX_BUCKETS).next_power_of_two();
    let budget = live_bytes
        .saturating_sub(object_bytes(buckets, 0))
        .max(mean);
    (budget, buckets)
}

/// Run lru-cache on one mutator thread.
pub fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &LruCacheParams) -> Result<ThreadOutcome, String> {
    let hit_rate = p.hit_rate.clamp(0.0, 1.0);
    let get_fraction = p.get_fraction.clamp(0.0, 1.0);
    let min_value = p.min_value_bytes.max(1);
    let max_value = p.max_value_bytes.max(min_value);
    let ops_per_sec = p.ops_per_sec as f64;
    let mut rng = ctx.rng();
    let (budget, buckets) = geometry(ctx.live_bytes(), min_value, max_value);
    m.scope(|s| {
        let mut cache = LruCache::new(s, budget, buckets).map_err(oom)?;
        // Fill with keys 0, 1, 2, ... until the next value would not fit.
        loop {
            let size = rng.random_range(min_value..=max_value);
            if cache.bytes() + entry_weight(size) > cache.budget() {
                break;
            }
            let key = cache.len();
            cache.put(s, key, size as usize)?;
        }
        // Uniform keys over this space hit with probability entries / keys.
        let key_space = if hit_rate > 0.0 {
            ((cache.len() as f64 / hit_rate).round() as u64).max(cache.len().max(1))
        } else {
            u64::MAX
        };
        ctx.ready(s);
        let mut pacer = Pacer::new(ops_per_sec);
        let mut latency = LatencyHistogram::new();
        let mut out = Vec::with_capacity(max_value as usize);
        let mut ops = 0u64;
        while ctx.running() {
            let due = pacer.wait(s);
            let key = rng.random_range(0..key_space);
            let is_get = rng.random::<f64>() < get_fraction;
            let size = rng.random_range(min_value..=max_value) as usize;
            if is_get {
                if !cache.get(s, key, &mut out)? {
                    // Read-through: the client loads the value and caches it.
                    cache.put(s, key, size)?;
                }
            } else {
                cache.put(s, key, size)?;
            }
            latency.record(due.elapsed().as_nanos() as u64);
            ops += 1;
        }
        Ok(ThreadOutcome {
            operations: ops,
            latency: Some(latency),
        })
    })
}
