//! Direct buffers in the random programs: the shadow model of a buffer (its native bytes,
//! its reference count, pooled or not), allocating one (unpooled, or from the [`NativePool`]
//! every thread of the run shares; 1 byte to tens of KiB, some larger than the pool's largest
//! class, so unpooled inside the pool) as an owner object the rest of the program treats like
//! any other object, the operations on a buffer reached through the graph (write, fill and
//! read random byte ranges, `retain`, `release`, accesses out of bounds), comparing a whole
//! buffer with the model (at checkpoints, for every owner reached), and the end of a run's
//! accounting: once every owner is dropped and two cycles ran, every buffer was freed exactly
//! once (by `release` or by its owner's cleaner) and no native byte is left in use; in
//! `epsilon` mode nothing was cleaned and `release` alone freed.
//!
//! An owner's 16 raw bytes are the runtime's (an entry id and a random key), so its model
//! holds those bytes, read once after the allocation, instead of an id: they identify the
//! owner as the id identifies other objects, and no op ever writes them.

use super::model::ObjModel;
use super::program::{Level, Program};
use super::rng::Rng;
use gc_core::object_size;
use gc_runtime::native::{NativeError, NativePool};
use gc_runtime::{DirectBuffer, DirectError, GcStats, Local, Mode, Scope, DIRECT_BUFFER_SHAPE};

/// Raw bytes of an owner object.
const OWNER_BYTES: usize = 16;
/// References a buffer's model counts at most (`retain` stops there).
const MAX_REFS: u32 = 4;
/// The shared pool's chunk size: its largest class is a quarter of it (16 KiB), so the
/// buffers above that, up to [`MAX_LEN`], are unpooled mappings of the pool.
pub(super) const POOL_CHUNK: usize = 64 << 10;
/// The largest buffer the programs allocate.
const MAX_LEN: u64 = 48 << 10;
/// Unpooled buffers a thread allocates at most in `epsilon` mode, where a buffer dropped
/// unreleased keeps its mapping for good (each one is a mapping of its own).
pub(super) const EPSILON_MAPPINGS_PER_THREAD: u64 = 1500;

/// The shadow model of a direct buffer.
pub(super) struct BufModel {
    /// The native bytes.
    pub(super) data: Vec<u8>,
    /// The reference count; 0 once released (every access is then refused).
    pub(super) refs: u32,
    /// From the run's shared pool (else unpooled direct memory).
    pub(super) pooled: bool,
}

/// What a thread did with direct buffers (the program's side of the accounting).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DirectCounts {
    /// Buffers allocated (tracked by the model, and garbage).
    pub(super) allocated: u64,
    /// Of those, from the shared pool.
    pub(super) pooled: u64,
    /// Their requested bytes, and those of the pooled ones.
    pub(super) bytes: u64,
    pub(super) pooled_bytes: u64,
    /// Releases that brought a count to zero (freed the memory), their bytes, and those of
    /// the pooled ones.
    pub(super) released: u64,
    pub(super) released_bytes: u64,
    pub(super) pooled_released: u64,
    pub(super) pooled_released_bytes: u64,
    /// Retains, and releases that left the memory held.
    pub(super) retains: u64,
    pub(super) partial_releases: u64,
    /// Buffer operations (on buffers reached through the graph).
    pub(super) ops: u64,
    /// Byte ranges (and whole buffers) compared with the model, and their bytes.
    pub(super) contents_checks: u64,
    pub(super) bytes_checked: u64,
    /// Accesses after the last release refused with `NativeError::Released`.
    pub(super) released_refused: u64,
    /// Accesses out of bounds refused with `NativeError::OutOfBounds`.
    pub(super) oob_refused: u64,
    /// Allocations refused at the direct-memory limit.
    pub(super) limit_failures: u64,
    /// Buffers compared in full at checkpoints.
    pub(super) checkpoint_buffers: u64,
}

impl DirectCounts {
    pub(super) fn add(&mut self, o: &DirectCounts) {
        self.allocated += o.allocated;
        self.pooled += o.pooled;
        self.bytes += o.bytes;
        self.pooled_bytes += o.pooled_bytes;
        self.released += o.released;
        self.released_bytes += o.released_bytes;
        self.pooled_released += o.pooled_released;
        self.pooled_released_bytes += o.pooled_released_bytes;
        self.retains += o.retains;
        self.partial_releases += o.partial_releases;
        self.ops += o.ops;
        self.contents_checks += o.contents_checks;
        self.bytes_checked += o.bytes_checked;
        self.released_refused += o.released_refused;
        self.oob_refused += o.oob_refused;
        self.limit_failures += o.limit_failures;
        self.checkpoint_buffers += o.checkpoint_buffers;
    }

    fn note_release(&mut self, len: usize, pooled: bool) {
        self.released += 1;
        self.released_bytes += len as u64;
        if pooled {
            self.pooled_released += 1;
            self.pooled_released_bytes += len as u64;
        }
    }
}

/// Which buffer operation to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BufOp {
    /// Drawn at random.
    Any,
    /// Write a random range.
    Write,
    /// Compare the whole buffer with the model.
    Check,
}

/// A buffer length: mostly small, some of several KiB, a tenth larger than the pool's
/// largest class.
pub(super) fn buffer_len(rng: &mut Rng) -> usize {
    let (lo, hi) = match rng.below(100) {
        0..=34 => (1, 64),
        35..=69 => (65, 2048),
        70..=89 => (2049, (POOL_CHUNK / 4) as u64),
        _ => ((POOL_CHUNK / 4) as u64 + 1, MAX_LEN),
    };
    rng.range(lo, hi) as usize
}

/// `n` random bytes (eight per draw: buffers are written by the MiB).
fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(n);
    v
}

/// A random byte range of a buffer of `len` bytes: (offset, length), length at least 1.
fn random_range(rng: &mut Rng, len: usize) -> (usize, usize) {
    let off = rng.index(len);
    let most = match rng.below(10) {
        0..=4 => 16,
        5..=7 => 512,
        8 => 8192,
        _ => len,
    };
    (off, 1 + rng.index(most.min(len - off)))
}

impl<'h> Program<'h> {
    /// A garbage burst's buffer `l` (`len` bytes, pooled or not), which the model does not
    /// track: check it, write a random range and read it back, and release it now and then
    /// (then every access must be refused). Counted in `dc`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn garbage_buffer(
        &self,
        g: &mut Scope<'_>,
        l: Local<'_>,
        len: usize,
        pooled: bool,
        rng: &mut Rng,
        dc: &mut DirectCounts,
        release_per_mille: u64,
    ) {
        let via = || format!("garbage buffer of {len} bytes");
        let d = self.direct_of(g, l, &via);
        ensure!(
            self,
            d.len() == len && d.is_pooled() == pooled && d.ref_count() == 1,
            "{}: len {} pooled {} count {}",
            via(),
            d.len(),
            d.is_pooled(),
            d.ref_count()
        );
        dc.allocated += 1;
        dc.bytes += len as u64;
        if pooled {
            dc.pooled += 1;
            dc.pooled_bytes += len as u64;
        }
        let (off, n) = random_range(rng, len);
        let mut out = vec![0u8; n];
        if !pooled {
            self.expect_ok(d.read(off, &mut out), &via());
            ensure!(
                self,
                out.iter().all(|&b| b == 0),
                "{}: not zeroed at {off}",
                via()
            );
        }
        let data = random_bytes(rng, n);
        self.expect_ok(d.write(off, &data), &via());
        self.expect_ok(d.read(off, &mut out), &via());
        ensure!(
            self,
            out == data,
            "{}: {n} bytes written at {off} read back differently",
            via()
        );
        dc.contents_checks += 1;
        dc.bytes_checked += n as u64;
        if rng.chance(release_per_mille) {
            let freed = self.expect_ok(d.release(), &via());
            ensure!(self, freed, "{}: release at count 1 did not free it", via());
            dc.note_release(len, pooled);
            self.expect_released(d.write(0, &[0]), "write", &via);
            dc.released_refused += 1;
        }
    }

    /// Allocate a direct buffer (pooled half of the time), check the new owner and buffer,
    /// give a pooled one known contents, and return its handle and its model. `None` if the
    /// allocation failed (an out-of-memory error, or the limit: both counted and checked).
    pub(super) fn new_buffer<'s>(&mut self, s: &mut Scope<'s>) -> Option<(Local<'s>, ObjModel)> {
        if self.cfg.mode == Mode::Epsilon {
            if self.epsilon_mappings_left == 0 {
                return None;
            }
            self.epsilon_mappings_left -= 1;
        }
        let len = buffer_len(&mut self.rng);
        let pooled = self.rng.chance(500);
        let r = if pooled {
            s.alloc_pooled(self.native, len)
        } else {
            s.alloc_direct(len)
        };
        let l = match r {
            Ok(l) => l,
            Err(e) => {
                self.on_direct_error(s, e, len);
                return None;
            }
        };
        let o = s.get(l);
        ensure!(
            self,
            o.shape() == DIRECT_BUFFER_SHAPE && o.n_refs() == 0 && o.n_bytes() == OWNER_BYTES,
            "a new buffer's owner has shape {} refs {} raw bytes {}",
            o.shape(),
            o.n_refs(),
            o.n_bytes()
        );
        let mut raw = vec![0u8; OWNER_BYTES];
        o.read_bytes(0, &mut raw);
        let d = self.direct_of(s, l, &|| "a new buffer".into());
        ensure!(
            self,
            d.len() == len && d.is_pooled() == pooled && d.ref_count() == 1,
            "a new buffer of {len} bytes (pooled {pooled}): len {} pooled {} count {}",
            d.len(),
            d.is_pooled(),
            d.ref_count()
        );
        let data = if pooled {
            // Unspecified contents (a previous buffer's): give it known ones.
            let data = random_bytes(&mut self.rng, len);
            self.expect_ok(d.write(0, &data), "writing a new pooled buffer");
            data
        } else {
            // Direct memory starts zeroed.
            let got = self.expect_ok(d.to_vec(), "reading a new direct buffer");
            ensure!(
                self,
                got.iter().all(|&b| b == 0),
                "a new direct buffer of {len} bytes is not zeroed (byte {} is {:#x})",
                got.iter().position(|&b| b != 0).unwrap_or(0),
                got.iter().find(|&&b| b != 0).copied().unwrap_or(0)
            );
            self.st.direct.contents_checks += 1;
            self.st.direct.bytes_checked += len as u64;
            got
        };
        let c = &mut self.st.direct;
        c.allocated += 1;
        c.bytes += len as u64;
        if pooled {
            c.pooled += 1;
            c.pooled_bytes += len as u64;
        }
        let size = object_size(0, OWNER_BYTES as u64).expect("valid size");
        Some((
            l,
            ObjModel {
                shape: DIRECT_BUFFER_SHAPE,
                footprint: size,
                edges: Vec::new(),
                bytes: raw,
                buf: Some(Box::new(BufModel {
                    data,
                    refs: 1,
                    pooled,
                })),
            },
        ))
    }

    /// A direct buffer the model tracks, as a new local of the current level; `None` if the
    /// thread's buffers already hold their share of native memory, or the allocation failed.
    pub(super) fn alloc_buffer<'s>(&mut self, s: &mut Scope<'s>) -> Option<(Local<'s>, u64)> {
        if self.native_bytes > self.native_cap {
            if self.native_bytes <= self.native_prune_at {
                return None;
            }
            self.prune_blocked(s);
            self.native_prune_at = self.native_bytes + self.native_cap / 4;
            if self.native_bytes > self.native_cap {
                return None;
            }
        }
        self.next_id += 1;
        let id = self.next_id;
        let (l, m) = self.new_buffer(s)?;
        self.native_bytes += m.buf.as_ref().map_or(0, |b| b.data.len() as u64);
        self.model_bytes += m.footprint;
        self.objs.insert(id, m);
        Some((l, id))
    }

    /// An allocation of a direct buffer failed: at the limit (allowed only with a
    /// configured limit or in `epsilon` mode, after exactly the cycles the runtime runs), or
    /// out of memory (as for any object).
    pub(super) fn on_direct_error(&mut self, s: &Scope<'_>, e: DirectError, len: usize) {
        match e {
            DirectError::LimitReached {
                requested,
                limit,
                cycles,
                collects,
                ..
            } => {
                let collecting = self.cfg.mode != Mode::Epsilon;
                ensure!(
                    self,
                    requested == len as u64
                        && limit == self.direct_limit
                        && collects == collecting
                        && cycles == if collecting { 2 } else { 0 },
                    "direct buffer of {len} bytes refused with a wrong error: {e:?} (limit \
                     {}, mode {})",
                    self.direct_limit,
                    self.cfg.mode
                );
                ensure!(
                    self,
                    self.cfg.max_direct.is_some() || !collecting,
                    "direct buffer of {len} bytes refused at the default limit ({} bytes) with \
                     at most {} bytes of buffers reachable per thread: {e}",
                    self.direct_limit,
                    self.native_cap
                );
                self.st.direct.limit_failures += 1;
            }
            DirectError::OutOfMemory(oom) => {
                let size = object_size(0, OWNER_BYTES as u64).expect("valid size");
                self.on_oom(s, &oom.to_string(), size);
            }
            e => self.fail(format!(
                "direct buffer of {len} bytes failed with an unexpected error: {e}"
            )),
        }
    }

    /// `v`, or fail naming `what`.
    #[track_caller]
    fn expect_ok<T>(&self, v: Result<T, NativeError>, what: &str) -> T {
        v.unwrap_or_else(|e| self.fail(format!("{what}: {e}")))
    }

    /// The buffer `l` owns; failing if the runtime does not see an owner there.
    pub(super) fn direct_of<'a>(
        &self,
        s: &'a mut Scope<'_>,
        l: Local<'_>,
        via: &dyn Fn() -> String,
    ) -> DirectBuffer<'a> {
        s.direct(l)
            .unwrap_or_else(|e| self.fail(format!("{}: not a buffer for the runtime: {e}", via())))
    }

    /// `r` must be the refusal of an access after the last release.
    fn expect_released<T: std::fmt::Debug>(
        &self,
        r: Result<T, NativeError>,
        op: &str,
        via: &dyn Fn() -> String,
    ) {
        ensure!(
            self,
            matches!(r, Err(NativeError::Released { .. })),
            "{}: {op} of a released buffer gave {r:?}, not NativeError::Released",
            via()
        );
    }

    /// [`Self::expect_released`], counted.
    fn refused<T: std::fmt::Debug>(
        &mut self,
        r: Result<T, NativeError>,
        op: &str,
        via: &dyn Fn() -> String,
    ) {
        self.expect_released(r, op, via);
        self.st.direct.released_refused += 1;
    }

    /// Compare the whole buffer `d` with its model: length, pooled or not, reference count,
    /// and every byte (or, once released, that a read is refused).
    pub(super) fn check_buffer(
        &self,
        d: &DirectBuffer<'_>,
        m: &BufModel,
        via: &dyn Fn() -> String,
    ) -> DirectCounts {
        let mut c = DirectCounts::default();
        ensure!(
            self,
            d.len() == m.data.len() && d.is_pooled() == m.pooled && d.ref_count() == m.refs,
            "{}: buffer len {} pooled {} count {}, model len {} pooled {} count {}",
            via(),
            d.len(),
            d.is_pooled(),
            d.ref_count(),
            m.data.len(),
            m.pooled,
            m.refs
        );
        if m.refs == 0 {
            let r = d.to_vec();
            self.expect_released(r, "to_vec", via);
            c.released_refused += 1;
            return c;
        }
        let got = self.expect_ok(d.to_vec(), &format!("{}: reading the buffer", via()));
        if got != m.data {
            let at = got.iter().zip(&m.data).position(|(a, b)| a != b).unwrap();
            let show: Vec<String> = got
                .iter()
                .zip(&m.data)
                .skip(at)
                .take(16)
                .map(|(a, b)| format!("{a:02x}/{b:02x}"))
                .collect();
            self.fail(format!(
                "{}: native bytes of a {}-byte buffer differ from byte {at} on (buffer/model): {}",
                via(),
                got.len(),
                show.join(" ")
            ));
        }
        c.contents_checks += 1;
        c.bytes_checked += got.len() as u64;
        c
    }

    /// One operation on the buffer `d`, modelled by `m`: write, fill or read a random range,
    /// retain, release, or an access out of bounds. On a released buffer every access must be
    /// refused. Returns the bytes a release to zero freed (0 if none).
    pub(super) fn buffer_op(
        &mut self,
        d: &DirectBuffer<'_>,
        m: &mut BufModel,
        kind: BufOp,
        via: &dyn Fn() -> String,
    ) -> u64 {
        self.st.direct.ops += 1;
        let len = m.data.len();
        let r = match kind {
            BufOp::Any => self.rng.below(100),
            BufOp::Write => 0,
            BufOp::Check => 99,
        };
        if m.refs == 0 {
            ensure!(
                self,
                d.ref_count() == 0,
                "{}: released buffer has count {}",
                via(),
                d.ref_count()
            );
            match r {
                0..=34 => {
                    let res = d.write(0, &[1]);
                    self.refused(res, "write", via)
                }
                35..=64 => {
                    let res = d.read_u64(0);
                    self.refused(res, "read_u64", via)
                }
                65..=74 => {
                    let res = d.retain();
                    self.refused(res, "retain", via)
                }
                75..=89 => {
                    let res = d.release();
                    self.refused(res, "release", via)
                }
                _ => {
                    let res = d.fill(0, len, 0);
                    self.refused(res, "fill", via)
                }
            }
            return 0;
        }
        let (off, n) = random_range(&mut self.rng, len);
        match r {
            0..=34 => {
                if self.rng.chance(200) {
                    let byte = self.rng.next() as u8;
                    self.expect_ok(d.fill(off, n, byte), &format!("{}: fill", via()));
                    m.data[off..off + n].fill(byte);
                } else if n >= 8 && self.rng.chance(200) {
                    let v = self.rng.next();
                    self.expect_ok(d.write_u64(off, v), &format!("{}: write_u64", via()));
                    m.data[off..off + 8].copy_from_slice(&v.to_le_bytes());
                } else {
                    let data = random_bytes(&mut self.rng, n);
                    self.expect_ok(d.write(off, &data), &format!("{}: write", via()));
                    m.data[off..off + n].copy_from_slice(&data);
                }
            }
            35..=64 => {
                if n >= 8 && self.rng.chance(200) {
                    let v = self.expect_ok(d.read_u64(off), &format!("{}: read_u64", via()));
                    let want = u64::from_le_bytes(m.data[off..off + 8].try_into().unwrap());
                    ensure!(
                        self,
                        v == want,
                        "{}: read_u64 at {off} of a {len}-byte buffer: {v:#x}, model {want:#x}",
                        via()
                    );
                    self.st.direct.bytes_checked += 8;
                } else {
                    let mut out = vec![0u8; n];
                    self.expect_ok(d.read(off, &mut out), &format!("{}: read", via()));
                    ensure!(
                        self,
                        out == m.data[off..off + n],
                        "{}: {n} bytes at {off} of a {len}-byte buffer differ from the model",
                        via()
                    );
                    self.st.direct.bytes_checked += n as u64;
                }
                self.st.direct.contents_checks += 1;
            }
            65..=74 => {
                if m.refs < MAX_REFS {
                    self.expect_ok(d.retain(), &format!("{}: retain", via()));
                    m.refs += 1;
                    self.st.direct.retains += 1;
                }
            }
            75..=82 => {
                let freed = self.expect_ok(d.release(), &format!("{}: release", via()));
                ensure!(
                    self,
                    freed == (m.refs == 1),
                    "{}: release at count {} returned {freed}",
                    via(),
                    m.refs
                );
                m.refs -= 1;
                if freed {
                    self.st.direct.note_release(len, m.pooled);
                    // Every later access is refused.
                    let res = d.read(0, &mut [0]);
                    self.refused(res, "read", via);
                    return len as u64;
                }
                self.st.direct.partial_releases += 1;
            }
            83..=87 => {
                // Past the end: from up to 8 bytes before it, one byte too many or more.
                let off = len - self.rng.index(len.min(8) + 1);
                let n = len - off + 1 + self.rng.index(8);
                let res = d.read(off, &mut vec![0u8; n]);
                ensure!(
                    self,
                    matches!(
                        res,
                        Err(NativeError::OutOfBounds { offset, len: l, buffer_len, .. })
                            if offset == off && l == n && buffer_len == len
                    ),
                    "{}: read of {n} bytes at {off} of a {len}-byte buffer gave {res:?}",
                    via()
                );
                self.st.direct.oob_refused += 1;
            }
            _ => {
                let c = self.check_buffer(d, m, via);
                self.st.direct.add(&c);
            }
        }
        0
    }

    /// A buffer op on this thread's buffer `id`, whose owner `o` the caller rooted: held as a
    /// new local of the current level (a buffer is reached only through a handle).
    pub(super) fn own_buffer_op<'s>(
        &mut self,
        s: &mut Scope<'s>,
        cur: &mut Level<'s, '_>,
        l: Local<'s>,
        id: u64,
        kind: BufOp,
    ) {
        self.hold(cur, l, id);
        let via = || format!("buffer {id:#x}");
        let d = self.direct_of(s, l, &via);
        let mut m = self
            .objs
            .get_mut(&id)
            .unwrap()
            .buf
            .take()
            .expect("a buffer's model");
        let freed = self.buffer_op(&d, &mut m, kind, &via);
        self.objs.get_mut(&id).unwrap().buf = Some(m);
        self.native_bytes = self.native_bytes.saturating_sub(freed);
    }

    /// Walk to an object; if it is a buffer, or has a buffer in a slot, run a buffer op on
    /// that buffer.
    pub(super) fn buffer_walk_op<'s>(&mut self, s: &mut Scope<'s>, cur: &mut Level<'s, '_>) {
        let Some(root) = self.pick_root() else { return };
        let steps = self.rng.below(4);
        let (o, id) = self.walk(s, cur, root, steps);
        if self.objs[&id].buf.is_some() {
            let l = s.root(o);
            self.own_buffer_op(s, cur, l, id, BufOp::Any);
            return;
        }
        let Some((i, bid)) = pick_buffer_slot(&self.objs, id, &mut self.rng) else {
            return;
        };
        let b = o.load(i).unwrap_or_else(|| {
            self.fail(format!(
                "slot {i} of {id:#x} is null, model says buffer {bid:#x}"
            ))
        });
        self.check_header(&b, bid, &|| format!("slot {i} of {id:#x}"));
        self.count_header_walked();
        let l = s.root(b);
        self.own_buffer_op(s, cur, l, bid, BufOp::Any);
    }

    /// A burst of 4 to 32 untracked buffers, half of them larger than the pool's largest
    /// class, each dropped (or released, then dropped) as soon as it is checked: the traffic
    /// that makes a small direct-memory limit run "Direct Memory" cycles, each owner in a
    /// scope of its own so that those cycles find it dead.
    pub(super) fn buffer_burst(&mut self, s: &mut Scope<'_>) {
        let n = self.rng.range(4, 32);
        let mut rng = Rng(self.rng.next());
        let release_per_mille = if self.cfg.mode == Mode::Epsilon {
            1000
        } else {
            300
        };
        let mut dc = DirectCounts::default();
        let mut err = None;
        let p = &*self;
        for _ in 0..n {
            let len = if rng.chance(500) {
                rng.range((POOL_CHUNK / 4) as u64 + 1, MAX_LEN) as usize
            } else {
                buffer_len(&mut rng)
            };
            let pooled = rng.chance(500);
            let r = s.scope(|b| {
                let l = if pooled {
                    b.alloc_pooled(p.native, len)
                } else {
                    b.alloc_direct(len)
                }?;
                p.garbage_buffer(b, l, len, pooled, &mut rng, &mut dc, release_per_mille);
                Ok::<(), DirectError>(())
            });
            if let Err(e) = r {
                err = Some((e, len));
                break;
            }
        }
        self.st.direct.add(&dc);
        if let Some((e, len)) = err {
            self.on_direct_error(s, e, len);
        }
    }

    /// Where a small limit is configured: hold 64 KiB buffers in a nested scope until an
    /// allocation is refused at the limit (after its cycles), checking each buffer and the
    /// refusal ([`Self::on_direct_error`]); the scope's end drops them all, unreleased.
    pub(super) fn buffer_hoard(&mut self, s: &mut Scope<'_>) {
        let Some(limit) = self.cfg.max_direct else {
            return;
        };
        const LEN: usize = 64 << 10;
        let most = limit as usize / LEN * 2 + 2;
        let mut rng = Rng(self.rng.next());
        let mut dc = DirectCounts::default();
        let p = &*self;
        let err = s.scope(|h| {
            for _ in 0..most {
                let pooled = rng.chance(500);
                let l = match if pooled {
                    h.alloc_pooled(p.native, LEN)
                } else {
                    h.alloc_direct(LEN)
                } {
                    Ok(l) => l,
                    Err(e) => return Some(e),
                };
                p.garbage_buffer(h, l, LEN, pooled, &mut rng, &mut dc, 0);
            }
            None
        });
        self.st.direct.add(&dc);
        match err {
            Some(e) => self.on_direct_error(s, e, LEN),
            None => self.fail(format!(
                "{most} buffers of {LEN} bytes held at once under a {limit}-byte direct-memory \
                 limit, none refused"
            )),
        }
    }

    /// Checkpoint: compare every buffer the traversal reached (`bufs`, owners rooted in `cs`
    /// with their ids, in the model `objs`) in full with its model.
    pub(super) fn check_buffers(
        &self,
        cs: &mut Scope<'_>,
        objs: &std::collections::HashMap<u64, ObjModel>,
        bufs: &[(Local<'_>, u64)],
        what: &str,
    ) -> DirectCounts {
        let mut c = DirectCounts::default();
        for &(l, id) in bufs {
            let via = || format!("{what} buffer {id:#x} at a checkpoint");
            let d = self.direct_of(cs, l, &via);
            let m = objs[&id].buf.as_ref().expect("a buffer's model");
            c.add(&self.check_buffer(&d, m, &via));
            c.checkpoint_buffers += 1;
        }
        c
    }
}

/// The end of a run's accounting (see the module documentation), after every owner was
/// dropped and (in a mode that collects) two cycles ran: `t` is what the threads did, the
/// garbage buffers included; `stats` holds every cycle of the run (a subscription's records)
/// and the heap's direct counters now. Returns what failed.
pub(super) fn check_end(
    stats: &GcStats,
    native: &NativePool,
    mode: Mode,
    t: &DirectCounts,
) -> Result<(), String> {
    let st = &stats.direct;
    let ps = native.stats();
    let mut bad = Vec::new();
    let mut want = |ok: bool, msg: String| {
        if !ok {
            bad.push(msg);
        }
    };
    want(
        st.allocated == t.allocated && st.released == t.released,
        format!(
            "the heap counts {} buffers allocated and {} released, the programs {} and {}",
            st.allocated, st.released, t.allocated, t.released
        ),
    );
    want(
        st.limit_failures == t.limit_failures,
        format!(
            "the heap counts {} allocations refused at the limit, the programs saw {}",
            st.limit_failures, t.limit_failures
        ),
    );
    let cleaners_run: u64 = stats.cycles.iter().map(|c| c.cleaners_run).sum();
    let bytes_cleaned: u64 = stats.cycles.iter().map(|c| c.direct_bytes_cleaned).sum();
    want(
        cleaners_run == st.owners_dead && bytes_cleaned == st.cleaned_bytes,
        format!(
            "the cycle records count {cleaners_run} cleaners run ({bytes_cleaned} bytes), the \
             direct stats {} dead owners ({} bytes cleaned)",
            st.owners_dead, st.cleaned_bytes
        ),
    );
    if mode == Mode::Epsilon {
        let held = t.bytes - t.released_bytes;
        let pooled_held = t.pooled_bytes - t.pooled_released_bytes;
        want(
            st.cleaned == 0 && st.owners_dead == 0 && st.limit_cycles == 0,
            format!(
                "epsilon heap: {} cleaned, {} dead owners, {} limit cycles (no cycle ever runs)",
                st.cleaned, st.owners_dead, st.limit_cycles
            ),
        );
        want(
            st.owners == st.allocated,
            format!(
                "epsilon heap: {} owners of {} buffers",
                st.owners, st.allocated
            ),
        );
        want(
            st.reserved_bytes == held
                && st.pooled_bytes == pooled_held
                && st.direct_bytes == held - pooled_held,
            format!(
                "epsilon heap: release alone frees: {held} bytes ({pooled_held} pooled) should \
                 be in use, the heap counts {} ({} pooled, {} direct)",
                st.reserved_bytes, st.pooled_bytes, st.direct_bytes
            ),
        );
        want(
            ps.live_buffers == t.pooled - t.pooled_released && ps.used_bytes == pooled_held,
            format!(
                "epsilon heap: the pool has {} buffers alive ({} bytes), the programs hold {} \
                 ({pooled_held} bytes)",
                ps.live_buffers,
                ps.used_bytes,
                t.pooled - t.pooled_released
            ),
        );
    } else {
        want(
            st.released + st.cleaned == st.allocated && st.owners_dead == st.allocated,
            format!(
                "each buffer freed exactly once: {} allocated, {} released + {} cleaned, {} dead \
                 owners",
                st.allocated, st.released, st.cleaned, st.owners_dead
            ),
        );
        want(
            st.cleaned_bytes == t.bytes - t.released_bytes,
            format!(
                "cleaners freed {} bytes, the programs left {} unreleased",
                st.cleaned_bytes,
                t.bytes - t.released_bytes
            ),
        );
        want(
            st.owners == 0
                && st.reserved_bytes == 0
                && st.direct_bytes == 0
                && st.pooled_bytes == 0
                && st.unpooled_mapped_bytes == 0,
            format!(
                "native memory left after the last owner died and two cycles ran: {} owners, {} \
                 bytes reserved, {} direct, {} pooled, {} unpooled bytes mapped",
                st.owners,
                st.reserved_bytes,
                st.direct_bytes,
                st.pooled_bytes,
                st.unpooled_mapped_bytes
            ),
        );
        want(
            ps.live_buffers == 0 && ps.used_bytes == 0 && ps.unpooled_bytes == 0,
            format!(
                "the shared pool still has {} buffers alive ({} bytes, {} unpooled bytes mapped)",
                ps.live_buffers, ps.used_bytes, ps.unpooled_bytes
            ),
        );
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "direct buffers at the end of the run: {}; {st:?}",
            bad.join("; ")
        ))
    }
}

/// A random slot of model object `id` (in `objs`) that points at a buffer's owner, and that
/// owner's id; `None` if no slot does.
pub(super) fn pick_buffer_slot(
    objs: &std::collections::HashMap<u64, ObjModel>,
    id: u64,
    rng: &mut Rng,
) -> Option<(usize, u64)> {
    let slots: Vec<(usize, u64)> = objs[&id]
        .edges
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.filter(|e| objs[e].buf.is_some()).map(|e| (i, e)))
        .collect();
    (!slots.is_empty()).then(|| slots[rng.index(slots.len())])
}
