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
//! The contents of a concatenation up to [`CHUNK`] bytes long are gathered in one reused buffer
//! (each operand read once), then hashed, compared and written from it. Longer results can be
//! very large (a program that doubles a string until the heap is full), so their contents are
//! hashed, compared and copied in bounded chunks straight from the operand strings, without
//! building the result on the Rust side.

use crate::object::{
    hash_bytes, read_string_bytes, set_string_hash, string_len, string_raw_size,
    write_string_bytes, ContentHash, STRING,
};
use gc_runtime::{Local, ObjRef, OutOfMemory, Scope, WeakRef};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes processed at a time when hashing, comparing or copying heap strings.
const CHUNK: usize = 64 << 10;
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

    /// The interned string with contents `bytes`, if one is alive (never allocates).
    pub fn lookup<'s>(&mut self, s: &Scope<'s>, bytes: &[u8]) -> Option<Local<'s>> {
        let hash = hash_bytes(bytes);
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
            None => self.insert(s, hash, len, |_, o| write_string_bytes(o, 0, bytes)),
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
        let mut hasher = ContentHash::new(len);
        for_each_chunk(s, src, &mut self.scratch, |chunk| {
            hasher.write(chunk);
            true
        });
        let hash = hasher.finish();
        if let Some(found) = self.find(s, hash, len, src) {
            return Ok(found);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = self.insert(s, hash, len, |s, o| {
            let mut at = 0;
            for_each_chunk(s, src, &mut scratch, |chunk| {
                write_string_bytes(o, at, chunk);
                at += chunk.len();
                true
            });
        });
        self.scratch = scratch;
        result
    }

    /// Allocates a string of `len` bytes with content hash `hash`, has `fill` write its
    /// contents (given the scope and the string), and enters it in the table.
    fn insert<'s>(
        &mut self,
        s: &mut Scope<'s>,
        hash: u64,
        len: usize,
        fill: impl FnOnce(&Scope<'s>, ObjRef<'_>),
    ) -> Result<Local<'s>, OutOfMemory> {
        let string = s.alloc(STRING, 0, string_raw_size(len))?;
        {
            let o = s.get(string);
            set_string_hash(o, hash);
            fill(s, o);
        }
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
        s: &Scope<'s>,
        hash: u64,
        len: usize,
        src: Source<'_, '_, '_>,
    ) -> Option<Local<'s>> {
        let (scratch, scratch2) = (&mut self.scratch, &mut self.scratch2);
        if let Some(w) = self.map.get(&hash) {
            match s.upgrade(w) {
                Some(l) if equal(s, s.get(l), len, src, scratch, scratch2) => return Some(l),
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
                if equal(s, s.get(l), len, src, scratch, scratch2) {
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

/// True if string `o` has the contents of `src` (of length `len`).
fn equal(
    s: &Scope<'_>,
    o: ObjRef<'_>,
    len: usize,
    src: Source<'_, '_, '_>,
    scratch: &mut Vec<u8>,
    theirs: &mut Vec<u8>,
) -> bool {
    if string_len(o) != len {
        return false;
    }
    let mut at = 0;
    for_each_chunk(s, src, scratch, |chunk| {
        let theirs = buffer(theirs, chunk.len());
        read_string_bytes(o, at, theirs);
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
/// 8, as [`ContentHash`] requires).
fn for_each_chunk(
    s: &Scope<'_>,
    src: Source<'_, '_, '_>,
    scratch: &mut Vec<u8>,
    mut f: impl FnMut(&[u8]) -> bool,
) -> bool {
    match src {
        Source::Bytes(bytes) => f(bytes),
        Source::Concat(a, b) => {
            let buf = buffer(scratch, CHUNK);
            // Bytes gathered in `buf`.
            let mut filled = 0;
            for part in [a, b] {
                let o = s.get(part);
                let len = string_len(o);
                let mut at = 0;
                while at < len {
                    let n = (len - at).min(CHUNK - filled);
                    read_string_bytes(o, at, &mut buf[filled..filled + n]);
                    filled += n;
                    at += n;
                    if filled == CHUNK {
                        if !f(buf) {
                            return false;
                        }
                        filled = 0;
                    }
                }
            }
            filled == 0 || f(&buf[..filled])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{string_hash, string_text};
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
}
