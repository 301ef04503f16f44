//! Bulk byte work on heap objects that never holds a pause: [`Scope::read_bytes`],
//! [`Scope::write_bytes`], [`Scope::fill_bytes`] and [`Scope::copy_bytes`] copy an object's raw
//! bytes one chunk (128 KiB, the chunk a large object is zeroed in) at a time, with a safepoint
//! poll between two chunks — what ZGC does when it clears a large array in segments, and what
//! a JIT's bulk copy loop does with a safepoint poll on its back edge.
//!
//! [`ObjRef::read_bytes`](crate::ObjRef::read_bytes) and its siblings copy in one go: an
//! [`ObjRef`](crate::ObjRef) is valid only until the next safepoint, so nothing that holds one
//! may poll, and a copy of 256 MB through it keeps every pause of every thread waiting for as
//! long as the copy takes (time-to-safepoint). These calls take handles ([`Local`]s) and the
//! scope mutably instead: between two chunks they poll, which may move the objects, and they
//! look the objects up again through their handles for the next chunk. Within a chunk the
//! mutator runs as usual: the barrier that resolves the handle gives the object's current
//! copy, so a chunk never reads or writes a copy the collector has left behind.
//!
//! The whole range is checked before the first byte moves: a call that is refused changes
//! nothing. Other threads that share an object (through a `Global`) may see a copy part done,
//! as they may see any racy write; each 8-byte word they read is one that some write stored.

use super::scope::{Local, Scope};
use crate::heap::BULK_CHUNK;

/// A bulk byte access outside an object's raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} of {len} raw bytes at offset {offset} is outside the object's {n_bytes} raw bytes: \
     keep offset + length within ObjRef::n_bytes()"
)]
pub struct BytesOutOfRange {
    /// The call refused (`read_bytes`, `write_bytes`, `fill_bytes`, `copy_bytes` source or
    /// destination).
    pub what: &'static str,
    /// The first byte asked for.
    pub offset: usize,
    /// Bytes asked for.
    pub len: usize,
    /// The object's raw bytes.
    pub n_bytes: usize,
}

impl<'s> Scope<'s> {
    /// Checks that `offset..offset + len` lies inside `obj`'s raw bytes.
    fn check_bytes(
        &self,
        what: &'static str,
        obj: Local<'_>,
        offset: usize,
        len: usize,
    ) -> Result<(), BytesOutOfRange> {
        let n_bytes = self.get(obj).n_bytes();
        match offset.checked_add(len) {
            Some(end) if end <= n_bytes => Ok(()),
            _ => Err(BytesOutOfRange {
                what,
                offset,
                len,
                n_bytes,
            }),
        }
    }

    /// Runs `op(at, n)` on consecutive pieces of `0..len`, at most one chunk each, with a
    /// safepoint poll between two pieces. `op` looks its objects up again through their
    /// handles: a poll may have moved them.
    fn chunked_bytes(&mut self, len: usize, mut op: impl FnMut(&mut Self, usize, usize)) {
        let mut at = 0;
        while at < len {
            if at > 0 {
                self.poll();
            }
            let n = BULK_CHUNK.min(len - at);
            op(self, at, n);
            at += n;
        }
    }

    /// Copies `out.len()` raw bytes of `obj` from `offset` on into `out`, a chunk at a time
    /// with a safepoint poll between chunks (see the module documentation).
    pub fn read_bytes(
        &mut self,
        obj: Local<'_>,
        offset: usize,
        out: &mut [u8],
    ) -> Result<(), BytesOutOfRange> {
        self.check_bytes("read_bytes", obj, offset, out.len())?;
        self.chunked_bytes(out.len(), |s, at, n| {
            s.get(obj).read_bytes(offset + at, &mut out[at..at + n]);
        });
        Ok(())
    }

    /// Writes `data` into `obj`'s raw bytes from `offset` on, a chunk at a time with a
    /// safepoint poll between chunks.
    pub fn write_bytes(
        &mut self,
        obj: Local<'_>,
        offset: usize,
        data: &[u8],
    ) -> Result<(), BytesOutOfRange> {
        self.check_bytes("write_bytes", obj, offset, data.len())?;
        self.chunked_bytes(data.len(), |s, at, n| {
            s.get(obj).write_bytes(offset + at, &data[at..at + n]);
        });
        Ok(())
    }

    /// Sets `len` raw bytes of `obj` from `offset` on to `byte`, a chunk at a time with a
    /// safepoint poll between chunks.
    pub fn fill_bytes(
        &mut self,
        obj: Local<'_>,
        offset: usize,
        len: usize,
        byte: u8,
    ) -> Result<(), BytesOutOfRange> {
        self.check_bytes("fill_bytes", obj, offset, len)?;
        let piece = vec![byte; BULK_CHUNK.min(len)];
        self.chunked_bytes(len, |s, at, n| {
            s.get(obj).write_bytes(offset + at, &piece[..n]);
        });
        Ok(())
    }

    /// Copies `len` raw bytes from `src` at `src_offset` into `dst` at `dst_offset`, a chunk
    /// at a time with a safepoint poll between chunks. `src` and `dst` may be the same object;
    /// overlapping ranges are copied as if through a buffer holding the whole source range
    /// (as `memmove`), by copying the chunks back to front when the destination lies above
    /// the source.
    pub fn copy_bytes(
        &mut self,
        src: Local<'_>,
        src_offset: usize,
        dst: Local<'_>,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BytesOutOfRange> {
        self.check_bytes("copy_bytes source", src, src_offset, len)?;
        self.check_bytes("copy_bytes destination", dst, dst_offset, len)?;
        let backwards = self.same_object(src, dst) && dst_offset > src_offset;
        let mut piece = vec![0u8; BULK_CHUNK.min(len)];
        self.chunked_bytes(len, |s, at, n| {
            // Back to front: the pieces are taken from the end, so a piece is read before the
            // piece below it overwrites any of it.
            let at = if backwards { len - at - n } else { at };
            let piece = &mut piece[..n];
            s.get(src).read_bytes(src_offset + at, piece);
            s.get(dst).write_bytes(dst_offset + at, piece);
        });
        Ok(())
    }
}
