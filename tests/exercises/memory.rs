//! Exercises of the chapter *Memory outside the heap*: the mapping budget that caps a heap,
//! the pool's size classes and the direct-memory limit, checked against the code.

use crate::{GIB, MIB};
use gc_core::virtual_memory::check_map_count;
use gc_runtime::native::{NativePool, PoolConfig};
use gc_runtime::HeapConfig;

/// Exercise 1: `vm.max_map_count` is 65530 (Linux's default) and the process already has 1000
/// mappings. What is the largest maximum heap (in MiB) that passes the mapping check?
fn largest_heap_for_default_map_count_mib() -> u64 {
    // Worst case every 2 MiB granule is its own mapping in each of four views, plus 6:
    // 4g + 6 <= 65530 - 1000, so g = 16131 granules = 32262 MiB, about 31.5 GiB.
    (65530 - 1000 - 6) / 4 * 2
}

/// Exercise 2: A pool with the default configuration is asked for 3000 bytes, then for 100 bytes.
/// What capacity does each buffer have?
fn pooled_capacities() -> (usize, usize) {
    // Size classes are powers of two from 512 bytes: 3000 -> 4096, 100 -> 512.
    (4096, 512)
}

/// Exercise 3: A 1 GiB heap sets no `max_direct_memory`. How many bytes may its direct and pooled
/// buffers hold at once?
fn default_direct_memory_limit() -> u64 {
    // As much as the maximum heap, the JDK's default for MaxDirectMemorySize too.
    GIB
}

#[test]
fn map_count_cap() {
    let heap = largest_heap_for_default_map_count_mib() * MIB;
    assert!(
        check_map_count(heap, 65530, 1000).is_ok(),
        "{heap} bytes do not fit"
    );
    assert!(
        check_map_count(heap + gc_core::GRANULE_SIZE, 65530, 1000).is_err(),
        "a larger heap fits too: the answer is not the largest"
    );
}

#[test]
fn pool_classes() {
    let pool = NativePool::new(PoolConfig::new().name("exercises")).unwrap();
    let a = pool.allocate(3000).unwrap();
    let b = pool.allocate(100).unwrap();
    let real = (a.capacity(), b.capacity());
    a.release().unwrap();
    b.release().unwrap();
    assert_eq!(pooled_capacities(), real);
}

#[test]
fn direct_limit() {
    assert_eq!(
        default_direct_memory_limit(),
        HeapConfig::new(GIB).direct_memory_limit()
    );
}
