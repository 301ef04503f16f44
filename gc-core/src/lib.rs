//! `gc-core`: the mechanism layer of a ZGC-style concurrent, compacting collector.
//!
//! It knows how memory is laid out and how pointers are colored, but not *when* to collect:
//! that policy lives in `gc-runtime`. The pieces, bottom-up:
//!
//! - [`word`]: the typed words [`Offset`], [`ColoredPtr`] and [`Address`], and the atomic
//!   [`ColoredSlot`] that holds a [`ColoredPtr`];
//! - [`address`]: colored pointers, the offset-bit count `S`, view bases, good/bad masks, and
//!   the conversions between the typed words;
//! - [`physical`]: the memfd (or directory file) backing, commit/uncommit, granule allocator;
//! - [`huge_pages`]: the huge-page setting (shmem THP or hugetlb) and what the system allows;
//! - [`virtual_memory`]: the four views (`MAP_FIXED_NOREPLACE`), mapping granules into them;
//! - [`page`], [`page_allocator`], [`page_cache`], [`page_table`], [`address_space`]: pages;
//! - [`heap_epoch`]: the epoch domain that guards lookups in the page table and the
//!   forwarding index, apart from the mark stacks' default one;
//! - [`view_populate`]: a view's page-table entries made ahead of use by read fault-around;
//! - [`object`]: the pointer-first object layout;
//! - [`live_map`], [`live_map_pool`]: per-page mark bitmaps with live counts, and the small
//!   pages' maps recycled from dropped pages;
//! - [`forwarding_entries`]: per-page forwarding entries with single-winner insert;
//! - [`barrier`]: the load barrier's fast path and self-healing;
//! - [`mark_color_rule`]: which mark color each cycle takes (neither the previous cycle's nor
//!   the last major's) and which forwarding table a stale color needs;
//! - [`remembered_set`], [`generation_map`]: per-page remembered sets (old slots that may point
//!   young) and page ages with a per-granule generation map, for the generational mode;
//! - [`value`], [`value_barrier`]: NaN-boxed value words (a number, an immediate or a colored
//!   pointer) in value slots, and their barrier;
//! - [`side_arena`]: memory for the side tables (live maps, remembered sets) carved from one
//!   reservation, so making a table changes no mapping;
//! - [`sync`]: the atomic-word indirection shared by the collector and the loom models.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod address;
pub mod address_space;
pub mod barrier;
pub mod config;
pub mod error;
pub mod forwarding_entries;
pub mod generation_map;
pub mod granule_map;
pub mod heap_epoch;
pub mod huge_pages;
pub mod live_map;
pub mod live_map_pool;
pub mod mark_color_rule;
pub mod object;
pub mod page;
pub mod page_allocator;
pub mod page_cache;
pub mod page_table;
pub mod physical;
mod prefault;
pub mod prefetch;
pub mod remembered_set;
pub mod reservation;
pub mod side_arena;
pub mod sync;
pub mod value;
pub mod value_barrier;
pub mod view_populate;
pub mod virtual_memory;
pub mod word;

/// The unit of physical memory and of mapping: 2 MiB.
pub const GRANULE_SIZE: u64 = 2 << 20;

pub use address::{AddressLayout, Color, GoodColor, View};
pub use barrier::{load_barrier, self_heal, SlowPath};
pub use config::{format_size, parse_size, Backing, MemoryConfig};
pub use error::{AllocError, HeapError};
pub use forwarding_entries::ForwardingEntries;
pub use generation_map::{GenerationMap, PageAge, MAX_SURVIVOR_AGE};
pub use huge_pages::{HugePageSystem, HugePageUse, HugePages, PageSizeReading};
pub use live_map::{LiveMap, MarkResult};
pub use live_map_pool::LiveMapPool;
pub use mark_color_rule::{ColorChoice, CycleKind, MarkColorRule, StaleSource};
pub use object::{
    object_size, object_size_with_values, Object, ObjectHeader, HEADER_SIZE, MAX_VALUES,
};
pub use page::{Page, PageKind, PageMemory, PageSizes};
pub use page_allocator::{MemoryUsage, PageAllocator};
pub use prefetch::prefetch;
pub use remembered_set::{RememberedSet, RemsetIndex, REMSET_WORD_BYTES};
pub use reservation::Reservation;
pub use side_arena::{SideArena, WordArray};
pub use value::{ValueKind, ValueSlot, ValueWord};
pub use value_barrier::{
    load_value_barrier, load_value_barrier_decoded, self_heal_value, LoadedValue,
};
pub use word::{Address, ColoredPtr, ColoredSlot, Offset};
