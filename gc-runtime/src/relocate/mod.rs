//! Relocation (ZGC's `ZRelocationSetSelector`, `ZRelocationSet`, `ZRelocate`): choosing the
//! pages to evacuate, the installed relocation set, copying live objects out of it (target
//! pages, in-place compaction when no target memory is left, root relocation), and the `stw`
//! mode's full remap. It owns the relocation set and the target pages of a cycle.

mod copy_remap;
mod full_remap;
mod relocation_set;
mod relocation_set_selector;
mod relocator;
mod retired_forwardings;
mod tenuring;

pub(crate) use full_remap::remap_all;
pub(crate) use relocation_set::RelocationSet;
pub(crate) use relocation_set_selector::{select, select_minor, Selection};
pub(crate) use relocator::{Relocate, RelocationTotals};
pub(crate) use tenuring::Tenuring;
