//! An arena: the chunks of a share of the threads, behind one lock (Netty's `PoolArena`,
//! jemalloc's arena). Threads are assigned to arenas round-robin so that they rarely contend
//! for the same lock; a buffer goes back to the arena its chunk belongs to, whichever thread
//! releases it.
//!
//! Each chunk serves one size class. Per class the arena keeps the chunks that have a free
//! slot (`partial`); a chunk that becomes empty is unmapped unless it is its class's last one
//! in the arena (a little memory kept for reuse, as Netty keeps its `qInit` chunks).

use super::chunk::Chunk;
use super::error::NativeError;
use super::size_class::SizeClasses;

/// Where a pooled buffer's memory is: its address, arena, chunk and class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    pub(super) addr: usize,
    pub(super) arena: u32,
    pub(super) chunk: u32,
    pub(super) class: u32,
}

/// What a free did to the arena's chunks.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct FreeOutcome {
    /// Bytes of a chunk unmapped because it became empty.
    pub(super) unmapped: usize,
}

/// The chunks of one arena.
#[derive(Debug)]
pub(super) struct Arena {
    index: u32,
    /// Chunk id → chunk (`None`: unmapped, the id is on `free_ids`).
    chunks: Vec<Option<Chunk>>,
    free_ids: Vec<u32>,
    /// Per class: ids of chunks with a free slot.
    partial: Vec<Vec<u32>>,
    /// Per class: chunks mapped.
    class_chunks: Vec<u32>,
}

impl Arena {
    pub(super) fn new(index: u32, classes: &SizeClasses) -> Arena {
        Arena {
            index,
            chunks: Vec::new(),
            free_ids: Vec::new(),
            partial: vec![Vec::new(); classes.count()],
            class_chunks: vec![0; classes.count()],
        }
    }

    /// A slot of `class`, from a chunk with room or from a new chunk of `chunk_bytes`.
    /// Returns the slot and the bytes of a chunk mapped for it (0 if none).
    pub(super) fn alloc(
        &mut self,
        class: usize,
        classes: &SizeClasses,
        chunk_bytes: usize,
    ) -> Result<(Slot, usize), NativeError> {
        let mut mapped = 0;
        let id = match self.partial[class].last() {
            Some(&id) => id,
            None => {
                let mut chunk = Chunk::new(classes.size(class), chunk_bytes)?;
                mapped = chunk.bytes();
                chunk.in_partial = true;
                let id = match self.free_ids.pop() {
                    Some(id) => {
                        self.chunks[id as usize] = Some(chunk);
                        id
                    }
                    None => {
                        self.chunks.push(Some(chunk));
                        (self.chunks.len() - 1) as u32
                    }
                };
                self.partial[class].push(id);
                self.class_chunks[class] += 1;
                id
            }
        };
        let chunk = self.chunks[id as usize]
            .as_mut()
            .expect("a partial chunk is mapped");
        let addr = chunk.take().expect("a partial chunk has a free slot");
        if chunk.is_full() {
            chunk.in_partial = false;
            self.partial[class].pop();
        }
        Ok((
            Slot {
                addr,
                arena: self.index,
                chunk: id,
                class: class as u32,
            },
            mapped,
        ))
    }

    /// Give `slot` back to its chunk.
    pub(super) fn free(&mut self, slot: Slot) -> FreeOutcome {
        debug_assert_eq!(slot.arena, self.index);
        let class = slot.class as usize;
        let chunk = self.chunks[slot.chunk as usize]
            .as_mut()
            .expect("a slot's chunk is mapped while the slot is taken");
        chunk.give(slot.addr);
        if !chunk.in_partial {
            chunk.in_partial = true;
            self.partial[class].push(slot.chunk);
        }
        if chunk.used() == 0 && self.class_chunks[class] > 1 {
            let bytes = chunk.bytes();
            self.partial[class].retain(|&id| id != slot.chunk);
            self.chunks[slot.chunk as usize] = None;
            self.free_ids.push(slot.chunk);
            self.class_chunks[class] -= 1;
            return FreeOutcome { unmapped: bytes };
        }
        FreeOutcome::default()
    }

    /// Bytes of this arena's chunks resident in RAM now.
    pub(super) fn resident_bytes(&self) -> u64 {
        self.chunks
            .iter()
            .flatten()
            .map(|c| c.mapping().resident_bytes())
            .sum()
    }

    /// Chunks mapped for `class`.
    #[cfg(test)]
    pub(super) fn chunks_of(&self, class: usize) -> u32 {
        self.class_chunks[class]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arena_maps_a_chunk_per_class_and_unmaps_extra_empty_chunks() {
        let classes = SizeClasses::new(512, 16 << 10);
        let mut a = Arena::new(0, &classes);
        let k = classes.class_of(16 << 10).unwrap();
        // 64 KiB chunks of 16 KiB slots: 4 per chunk; 5 slots need 2 chunks.
        let slots: Vec<Slot> = (0..5)
            .map(|_| a.alloc(k, &classes, 64 << 10).unwrap().0)
            .collect();
        assert_eq!(a.chunks_of(k), 2);
        assert_ne!(slots[3].chunk, slots[4].chunk);
        // Emptying the second chunk unmaps it (the first still has slots taken).
        assert_eq!(a.free(slots[4]), FreeOutcome { unmapped: 64 << 10 });
        assert_eq!(a.chunks_of(k), 1);
        // Emptying the last chunk keeps it.
        for s in &slots[..4] {
            assert_eq!(a.free(*s), FreeOutcome::default());
        }
        assert_eq!(a.chunks_of(k), 1);
        assert_eq!(
            a.alloc(k, &classes, 64 << 10).unwrap().1,
            0,
            "reused, not mapped"
        );
    }
}
