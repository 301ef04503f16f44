//! Weak string interning.
//!
//! Every Lox string is interned, as in clox, so that string equality — and table lookup — is
//! identity. clox's string table is a weak table: its sweep phase deletes the entries whose
//! string was not marked. Here the table lives on the Rust side as a map from the string's
//! *content hash* to [`WeakRef`]s, which the collector clears when their string dies (in
//! Concurrent Process Non-Strong References). A lookup upgrades the candidates with the same
//! hash and compares contents; cleared entries are dropped lazily — on lookup, and by a sweep
//! of the whole map whenever it has doubled since the last one. An interned string that nothing
//! else references is therefore collected like any other garbage.
//!
//! The contents of a concatenation up to `CHUNK` bytes long are gathered in one reused buffer
//! (each operand read once), then hashed, compared and written from it. Longer results can be
//! very large (a program that doubles a string until the heap is full), so their contents are
//! hashed, compared and copied in bounded chunks straight from the operand strings, without
//! building the result on the Rust side, with a safepoint poll between two chunks: hashing,
//! comparing or copying hundreds of megabytes in one go would hold every pause for as long.
//! After each poll the strings are looked up again through their handles (the collector may
//! have moved them), never kept as [`ObjRef`]s across it — which the borrow checker enforces,
//! since a poll takes the scope mutably.

use crate::object::{
    hash_bytes, read_string_bytes, set_string_hash, string_len, string_raw_size,
    write_string_bytes, ContentHash, STRING,
};
use gc_runtime::{Local, ObjRef, OutOfMemory, Scope, WeakRef};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes processed at a time when hashing, comparing or copying heap strings.
const CHUNK: usize = 64 << 10;
/// The longest concatenation [`Interner::concat_in_stretch`] makes (gathered on the stack).
pub const SHORT_MAX: usize = 64;
/// The map is swept when it has this many entries or twice as many as after the last sweep.
const MIN_SWEEP: usize = 1024;

/// Keys are already hashes: use them as they are.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 ^= hash_bytes(bytes);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type IdentityMap<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// The contents of a string to intern.
#[derive(Clone, Copy)]
enum Source<'a, 'l, 'm> {
    Bytes(&'a [u8]),
    /// The concatenation of two string objects.
    Concat(Local<'l>, Local<'m>),
}

/// The weak string table. See the module documentation.
#[derive(Default)]
pub struct Interner {
    /// One string per content hash (the common case).
    map: IdentityMap<WeakRef>,
    /// Strings whose hash collides with a different string in `map`.
    collisions: Vec<(u64, WeakRef)>,
    /// Entries in `map` and `collisions` (cleared ones included).
    entries: usize,
    /// Sweep when `entries` reaches this.
    sweep_at: usize,
    /// The contents of a short string being interned.
    gathered: Vec<u8>,
    /// Chunks of a long string being interned; chunks of a string it is compared with.
    scratch: Vec<u8>,
    scratch2: Vec<u8>,
}

impl Interner {
    /// An empty table.
    pub fn new() -> Interner {
        Interner {
            sweep_at: MIN_SWEEP,
            ..Interner::default()
        }
    }

    /// The interned string with contents `bytes`, allocated if there is none.
    pub fn intern<'s>(
        &mut self,
        s: &mut Scope<'s>,
        bytes: &[u8],
    ) -> Result<Local<'s>, OutOfMemory> {
        self.intern_source(s, Source::Bytes(bytes))
    }

    /// The interned string with the contents of `a` followed by `b` (two strings).
    pub fn intern_concat<'s>(
        &mut self,
        s: &mut Scope<'s>,
        a: Local<'_>,
        b: Local<'_>,
    ) -> Result<Local<'s>, OutOfMemory> {
        self.intern_source(s, Source::Concat(a, b))
    }

    /// [`Interner::intern_concat`] inside a safepoint-free stretch (the dispatch loop's),
    /// for a short result found in the table or allocated on the fast path
    /// ([`Scope::alloc_fresh`]); `None` (nothing changed) where that is not enough — a result
    /// longer than [`SHORT_MAX`] bytes, a hash collision, or an allocation that needs the
    /// slow path —, and the caller calls [`Interner::intern_concat`].
    #[inline]
    pub fn concat_in_stretch<'a>(
        &mut self,
        s: &'a Scope<'_>,
        a: ObjRef<'_>,
        b: ObjRef<'_>,
    ) -> Option<ObjRef<'a>> {
        let (la, lb) = (string_len(a), string_len(b));
        let len = la + lb;
        // With collisions, an equal string may be in `collisions` and not in `map`.
        if len > SHORT_MAX || !self.collisions.is_empty() {
            return None;
        }
        let mut gathered = [0u8; SHORT_MAX];
        read_string_bytes(a, 0, &mut gathered[..la]);
        read_string_bytes(b, 0, &mut gathered[la..len]);
        let bytes = &gathered[..len];
        let hash = hash_bytes(bytes);
        if let Some(w) = self.map.get(&hash) {
            let o = w.get(s)?;
            if string_len(o) != len {
                return None;
            }
            let mut theirs = [0u8; SHORT_MAX];
            read_string_bytes(o, 0, &mut theirs[..len]);
            return (theirs[..len] == *bytes).then_some(o);
        }
        let o = s.alloc_fresh(STRING, 0, string_raw_size(len))?.get();
        set_string_hash(o, hash);
        write_string_bytes(o, 0, bytes);
        if self.map.insert(hash, s.weak_ref(o)).is_none() {
            self.entries += 1;
        }
        if self.entries >= self.sweep_at {
            self.sweep();
        }
        Some(o)
    }

    /// The interned string with contents `bytes`, if one is alive (never allocates; long
    /// contents are compared a chunk at a time, with a safepoint poll between chunks).
    pub fn lookup<'s>(&mut self, s: &mut Scope<'s>, bytes: &[u8]) -> Option<Local<'s>> {
        let hash = if bytes.len() > CHUNK {
            chunked_hash(s, Source::Bytes(bytes), bytes.len(), &mut self.scratch)
        } else {
            hash_bytes(bytes)
        };
        self.find(s, hash, bytes.len(), Source::Bytes(bytes))
    }

    /// Number of entries, cleared ones included (they go at the next lookup or sweep).
    pub fn len(&self) -> usize {
        self.entries
    }

    /// True if the table has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Number of entries whose string is still alive (as of the last collection).
    pub fn live(&self) -> usize {
        self.map.values().filter(|w| !w.is_cleared()).count()
            + self
                .collisions
                .iter()
                .filter(|(_, w)| !w.is_cleared())
                .count()
    }

    /// Drops every cleared entry.
    pub fn sweep(&mut self) {
        self.map.retain(|_, w| !w.is_cleared());
        self.collisions.retain(|(_, w)| !w.is_cleared());
        self.entries = self.map.len() + self.collisions.len();
        self.sweep_at = (2 * self.entries).max(MIN_SWEEP);
    }

    fn intern_source<'s>(
        &mut self,
        s: &mut Scope<'s>,
        src: Source<'_, '_, '_>,
    ) -> Result<Local<'s>, OutOfMemory> {
        let len = match src {
            Source::Bytes(bytes) => bytes.len(),
            Source::Concat(a, b) => string_len(s.get(a)) + string_len(s.get(b)),
        };
        if len > CHUNK {
            return self.intern_chunked(s, src, len);
        }
        // Short enough to gather in one buffer: each operand is read once, and the result is
        // hashed, compared and written from the buffer.
        let mut gathered = std::mem::take(&mut self.gathered);
        let bytes = match src {
            Source::Bytes(bytes) => bytes,
            Source::Concat(a, b) => {
                let (a, b) = (s.get(a), s.get(b));
                let buf = buffer(&mut gathered, len);
                let (ours, theirs) = buf.split_at_mut(string_len(a));
                read_string_bytes(a, 0, ours);
                read_string_bytes(b, 0, theirs);
                &gathered[..len]
            }
        };
        let hash = hash_bytes(bytes);
        let result = match self.find(s, hash, len, Source::Bytes(bytes)) {
            Some(found) => Ok(found),
            None => self.insert(s, hash, len, |s, o| write_string_bytes(s.get(o), 0, bytes)),
        };
        self.gathered = gathered;
        result
    }

    /// [`Interner::intern_source`] for contents longer than [`CHUNK`] bytes, which are hashed,
    /// compared and copied a chunk at a time.
    fn intern_chunked<'s>(
        &mut self,
        s: &mut Scope<'s>,
        src: Source<'_, '_, '_>,
        len: usize,
    ) -> Result<Local<'s>, OutOfMemory> {
        let hash = chunked_hash(s, src, len, &mut self.scratch);
        if let Some(found) = self.find(s, hash, len, src) {
            return Ok(found);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = self.insert(s, hash, len, |s, o| {
            let mut at = 0;
            for_each_chunk(s, src, &mut scratch, |s, chunk| {
                write_string_bytes(s.get(o), at, chunk);
                at += chunk.len();
                true
            });
        });
        self.scratch = scratch;
        result
    }

    /// Allocates a string of `len` bytes with content hash `hash`, has `fill` write its
    /// contents (given the scope and the string's handle: it may poll), and enters it in the
    /// table.
    fn insert<'s>(
        &mut self,
        s: &mut Scope<'s>,
        hash: u64,
        len: usize,
        fill: impl FnOnce(&mut Scope<'s>, Local<'s>),
    ) -> Result<Local<'s>, OutOfMemory> {
        let string = s.alloc(STRING, 0, string_raw_size(len))?;
        set_string_hash(s.get(string), hash);
        fill(s, string);
        let weak = s.weak(string);
        match self.map.get(&hash) {
            Some(w) if !w.is_cleared() => self.collisions.push((hash, weak)),
            _ => {
                if self.map.insert(hash, weak).is_none() {
                    self.entries += 1;
                }
                // (A replaced cleared entry is dropped here: the count is unchanged.)
                if self.entries >= self.sweep_at {
                    self.sweep();
                }
                return Ok(string);
            }
        }
        self.entries += 1;
        if self.entries >= self.sweep_at {
            self.sweep();
        }
        Ok(string)
    }

    /// The live interned string with this hash, length and contents.
    fn find<'s>(
        &mut self,
        s: &mut Scope<'s>,
        hash: u64,
        len: usize,
        src: Source<'_, '_, '_>,
    ) -> Option<Local<'s>> {
        let (scratch, scratch2) = (&mut self.scratch, &mut self.scratch2);
        if let Some(w) = self.map.get(&hash) {
            match s.upgrade(w) {
                Some(l) if equal(s, l, len, src, scratch, scratch2) => return Some(l),
                Some(_) => {}
                None => {
                    if w.is_cleared() {
                        self.map.remove(&hash);
                        self.entries -= 1;
                    }
                }
            }
        }
        if self.collisions.is_empty() {
            return None;
        }
        let mut found = None;
        for (h, w) in &self.collisions {
            if *h != hash {
                continue;
            }
            if let Some(l) = s.upgrade(w) {
                if equal(s, l, len, src, scratch, scratch2) {
                    found = Some(l);
                    break;
                }
            }
        }
        let before = self.collisions.len();
        self.collisions.retain(|(_, w)| !w.is_cleared());
        self.entries -= before - self.collisions.len();
        found
    }
}

/// The content hash of `src` (of length `len`), hashed a chunk at a time.
fn chunked_hash(
    s: &mut Scope<'_>,
    src: Source<'_, '_, '_>,
    len: usize,
    scratch: &mut Vec<u8>,
) -> u64 {
    let mut hasher = ContentHash::new(len);
    for_each_chunk(s, src, scratch, |_, chunk| {
        hasher.write(chunk);
        true
    });
    hasher.finish()
}

/// True if string `o` has the contents of `src` (of length `len`).
fn equal(
    s: &mut Scope<'_>,
    o: Local<'_>,
    len: usize,
    src: Source<'_, '_, '_>,
    scratch: &mut Vec<u8>,
    theirs: &mut Vec<u8>,
) -> bool {
    if string_len(s.get(o)) != len {
        return false;
    }
    let mut at = 0;
    for_each_chunk(s, src, scratch, |s, chunk| {
        let theirs = buffer(theirs, chunk.len());
        read_string_bytes(s.get(o), at, theirs);
        at += chunk.len();
        *theirs == *chunk
    })
}

/// The first `n` bytes of `v`, which grows (zeroed) if it is shorter but never shrinks, so
/// that reusing it for strings of varying lengths does not clear it again each time.
fn buffer(v: &mut Vec<u8>, n: usize) -> &mut [u8] {
    if v.len() < n {
        v.resize(n, 0);
    }
    &mut v[..n]
}

/// Calls `f` on consecutive pieces of the contents of `src` while it returns true; returns
/// false if `f` stopped early. Every piece but the last is [`CHUNK`] bytes long (a multiple of
/// 8, as [`ContentHash`] requires). Between two pieces it polls for a safepoint, so `f` is
/// handed the scope to look its strings up again through their handles, and the operands of a
/// concatenation are looked up again for every piece.
fn for_each_chunk(
    s: &mut Scope<'_>,
    src: Source<'_, '_, '_>,
    scratch: &mut Vec<u8>,
    mut f: impl FnMut(&mut Scope<'_>, &[u8]) -> bool,
) -> bool {
    match src {
        Source::Bytes(bytes) => {
            for (i, piece) in bytes.chunks(CHUNK).enumerate() {
                if i > 0 {
                    s.poll();
                }
                if !f(s, piece) {
                    return false;
                }
            }
            true
        }
        Source::Concat(a, b) => {
            let buf = buffer(scratch, CHUNK);
            // Bytes gathered in `buf`.
            let mut filled = 0;
            for part in [a, b] {
                let len = string_len(s.get(part));
                let mut at = 0;
                while at < len {
                    let n = (len - at).min(CHUNK - filled);
                    read_string_bytes(s.get(part), at, &mut buf[filled..filled + n]);
                    filled += n;
                    at += n;
                    if filled == CHUNK {
                        if !f(s, buf) {
                            return false;
                        }
                        filled = 0;
                        s.poll();
                    }
                }
            }
            filled == 0 || f(s, &buf[..filled])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{string_bytes, string_hash, string_text};
    use gc_runtime::{Heap, HeapConfig, Mode};

    #[test]
    fn equal_contents_are_one_object() {
        let heap = Heap::new(HeapConfig::new(16 << 20).mode(Mode::Stw)).unwrap();
        let mut m = heap.attach("interner-test").unwrap();
        let mut interner = Interner::new();
        m.scope(|s| {
            let a = interner.intern(s, b"hello").unwrap();
            let b = interner.intern(s, b"hello").unwrap();
            assert!(s.same_object(a, b));
            let he = interner.intern(s, b"he").unwrap();
            let llo = interner.intern(s, b"llo").unwrap();
            let c = interner.intern_concat(s, he, llo).unwrap();
            assert!(s.same_object(a, c));
            let d = interner.intern_concat(s, llo, he).unwrap();
            assert!(!s.same_object(a, d));
            assert_eq!(string_text(s.get(d)), "llohe");
            assert_eq!(string_hash(s.get(a)), hash_bytes(b"hello"));
            assert_eq!(interner.len(), 4);
            // Still the same object after it moved.
            s.collect("test");
            s.collect("test");
            let e = interner.intern(s, b"hello").unwrap();
            assert!(s.same_object(a, e));
            let empty = interner.intern(s, b"").unwrap();
            let empty2 = interner.intern_concat(s, empty, empty).unwrap();
            assert!(s.same_object(empty, empty2));
        });
    }

    #[test]
    fn an_unreferenced_interned_string_is_collected() {
        for mode in [Mode::Concurrent, Mode::Stw] {
            let heap = Heap::new(HeapConfig::new(16 << 20).mode(mode).verify(true)).unwrap();
            let mut m = heap.attach("interner-test").unwrap();
            let mut interner = Interner::new();
            m.scope(|s| {
                let kept = interner.intern(s, b"kept").unwrap();
                s.scope(|s| {
                    interner.intern(s, b"dropped").unwrap();
                });
                assert_eq!(interner.live(), 2);
                s.collect("test");
                assert_eq!(interner.live(), 1, "{mode:?}: the unreferenced string died");
                assert!(interner.lookup(s, b"dropped").is_none());
                assert_eq!(interner.len(), 1, "the lookup dropped the cleared entry");
                let again = interner
                    .lookup(s, b"kept")
                    .expect("a referenced string stays");
                assert!(s.same_object(kept, again));
                // A fresh string with the old contents is a new, live object.
                let fresh = interner.intern(s, b"dropped").unwrap();
                assert_eq!(string_text(s.get(fresh)), "dropped");
                assert_eq!(interner.live(), 2);
            });
        }
    }

    #[test]
    fn sweeps_keep_the_table_small() {
        let heap = Heap::new(HeapConfig::new(16 << 20).mode(Mode::Stw)).unwrap();
        let mut m = heap.attach("interner-test").unwrap();
        let mut interner = Interner::new();
        m.scope(|s| {
            for round in 0..10 {
                s.scope(|s| {
                    for i in 0..1000 {
                        interner
                            .intern(s, format!("r{round}-{i}").as_bytes())
                            .unwrap();
                    }
                });
                s.collect("test");
            }
        });
        assert!(interner.len() < 3000, "{} entries", interner.len());
        interner.sweep();
        assert_eq!(interner.len(), 0);
    }

    #[test]
    fn concatenations_hash_as_their_contents() {
        let heap = Heap::new(HeapConfig::new(16 << 20).mode(Mode::Stw)).unwrap();
        let mut m = heap.attach("interner-test").unwrap();
        let mut interner = Interner::new();
        m.scope(|s| {
            let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
            // Short and long results (byte and word hashing), split anywhere.
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 24, 33, 40] {
                for split in [0, 1.min(len), len / 2, len] {
                    let (a, b) = text[..len].split_at(split);
                    let (a, b) = (
                        interner.intern(s, a).unwrap(),
                        interner.intern(s, b).unwrap(),
                    );
                    let ab = interner.intern_concat(s, a, b).unwrap();
                    let direct = interner.intern(s, &text[..len]).unwrap();
                    assert!(s.same_object(ab, direct), "{len} split at {split}");
                    assert_eq!(string_hash(s.get(ab)), hash_bytes(&text[..len]));
                }
            }
        });
    }

    #[test]
    fn large_concatenations_are_chunked() {
        let heap = Heap::new(HeapConfig::new(32 << 20).mode(Mode::Stw)).unwrap();
        let mut m = heap.attach("interner-test").unwrap();
        let mut interner = Interner::new();
        m.scope(|s| {
            // An odd length: the second operand starts mid-word, and one chunk holds the end
            // of the first and the start of the second.
            let big: Vec<u8> = (0..300_001u32).map(|i| b'a' + (i % 26) as u8).collect();
            let a = interner.intern(s, &big).unwrap();
            let aa = interner.intern_concat(s, a, a).unwrap();
            let mut twice = big.clone();
            twice.extend_from_slice(&big);
            let direct = interner.intern(s, &twice).unwrap();
            assert!(s.same_object(aa, direct));
            assert_eq!(string_len(s.get(aa)), 600_002);
        });
    }

    #[test]
    fn large_strings_poll_while_hashed_compared_and_copied() {
        let heap = Heap::new(HeapConfig::new(512 << 20)).unwrap();
        let mut m = heap.attach("interner-test").unwrap();
        let mut interner = Interner::new();
        m.scope(|s| {
            let half: Vec<u8> = (0..32 << 20).map(|i: u32| b'a' + (i % 26) as u8).collect();
            let a = interner.intern(s, &half).unwrap();
            // Chunks of 64 MiB; a pass over n chunks polls n - 1 times at least.
            let chunks = (64 << 20) / CHUNK as u64;
            // A new 64 MiB string: hashed and copied a chunk at a time (and, over reused
            // memory, zeroed in chunks by the allocation).
            let before = s.polls();
            let aa = interner.intern_concat(s, a, a).unwrap();
            let polls = s.polls() - before;
            assert!(
                polls >= 2 * chunks,
                "a new 64 MiB concatenation polled {polls} times"
            );
            // The same contents again: hashed, then compared with the interned string.
            let before = s.polls();
            let again = interner.intern_concat(s, a, a).unwrap();
            let polls = s.polls() - before;
            assert!(s.same_object(aa, again));
            assert!(
                polls >= 2 * chunks,
                "an interned 64 MiB concatenation polled {polls} times"
            );
            // Long contents from the Rust side, looked up: hashed and compared in chunks
            // (two passes over 32 MiB).
            let before = s.polls();
            assert!(interner
                .lookup(s, &half)
                .is_some_and(|l| s.same_object(l, a)));
            let polls = s.polls() - before;
            assert!(polls >= chunks - 2, "a 32 MiB lookup polled {polls} times");
            // Interning it from the Rust side: the same.
            let before = s.polls();
            let b = interner.intern(s, &half).unwrap();
            assert!(s.same_object(b, a));
            let polls = s.polls() - before;
            assert!(polls >= chunks - 2, "a 32 MiB intern polled {polls} times");
        });
    }

    #[test]
    fn chunked_concatenations_are_intact_while_cycles_run() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        for mode in [Mode::Concurrent, Mode::Stw] {
            let heap =
                Arc::new(Heap::new(HeapConfig::new(256 << 20).mode(mode).verify(true)).unwrap());
            let stop = Arc::new(AtomicBool::new(false));
            // Cycles back to back: they stop the mutator at the polls between chunks, and
            // relocate the medium-sized operands (garbage around them leaves their pages
            // sparse) while a concatenation is halfway through them.
            let collector = {
                let (heap, stop) = (heap.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = heap.collect("between chunks");
                    }
                })
            };
            let mut m = heap.attach("interner-test").unwrap();
            let mut interner = Interner::new();
            m.scope(|s| {
                let text: Vec<u8> = (0..(1 << 20) + 3)
                    .map(|i: u32| b'a' + (i % 26) as u8)
                    .collect();
                let mut parts = Vec::new();
                for k in 0..4u8 {
                    let mut t = text.clone();
                    t[k as usize] = b'A' + k;
                    parts.push(interner.intern(s, &t).unwrap());
                    // Garbage between the operands, on the same medium pages.
                    for g in 0..6u8 {
                        interner.intern(s, &vec![b'0' + g + k; 1 << 20]).unwrap();
                    }
                }
                for round in 0..8 {
                    let (i, j) = (round % 4, (round + 1) % 4);
                    let ab = interner.intern_concat(s, parts[i], parts[j]).unwrap();
                    let mut expected = Vec::new();
                    string_bytes(s.get(parts[i]), &mut expected);
                    string_bytes(s.get(parts[j]), &mut expected);
                    let mut got = Vec::new();
                    string_bytes(s.get(ab), &mut got);
                    assert!(got == expected, "{mode}: round {round}");
                    assert_eq!(string_hash(s.get(ab)), hash_bytes(&expected));
                    assert_eq!(expected[i], b'A' + i as u8);
                }
            });
            stop.store(true, Ordering::Relaxed);
            drop(m);
            collector.join().unwrap();
        }
    }
}
