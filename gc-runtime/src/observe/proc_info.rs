//! Facts about this process from `/proc` and the C library: mappings, file descriptors,
//! threads, memory (RSS vs Pss, `smaps_rollup`, a per-category `smaps` breakdown) and glibc
//! malloc's arenas (`mallinfo2`, `malloc_info`).
//!
//! Multi-mapping makes RSS misleading: a page touched through all three views is counted
//! three times in `VmRSS` but once in `Pss` (proportional set size). Memory reports use the
//! collector's own committed-bytes accounting and Pss, never RSS alone.
//!
//! It serves the reports of the runtime (`Heap::memory_report`) and of the workloads, so it
//! lives with the rest of what the collector tells about itself, not in gc-core: the mechanism
//! needs only the mapping count it checks against `vm.max_map_count`,
//! [`gc_core::virtual_memory::count_mappings`], re-exported here for this module's users.
//! It mirrors no ZGC class: it is the view from outside the collector (what `/proc` and `pmap`
//! show) that reports set beside the collector's own accounting.

use serde::Serialize;

pub use gc_core::virtual_memory::count_mappings;

/// Number of open file descriptors (entries of `/proc/self/fd`).
pub fn count_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// Number of threads (entries of `/proc/self/task`).
pub fn count_threads() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// Resident and proportional memory of this process, in bytes.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ProcessMemory {
    /// Resident set size: counts a multi-mapped page once per view.
    pub rss: u64,
    /// Proportional set size: counts each physical page once.
    pub pss: u64,
}

/// The scheduler state of thread `tid` of this process, the state letter of
/// `/proc/self/task/<tid>/stat` (`R` running or runnable, `S` sleeping, `D` uninterruptible);
/// `None` after the thread exited, or where `/proc` does not say.
pub fn thread_run_state(tid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    stat_state(&stat)
}

/// The state letter of a `stat` line (`tid (comm) S ...`; the name may hold spaces and
/// parentheses, so the state follows the last `)`).
pub fn stat_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// One line of a thread's `/proc/.../schedstat`: the CPU time it ran and the time it spent
/// runnable but waiting for a CPU (the kernel's run delay), both in nanoseconds since it
/// started. Both are counted when the thread gets a CPU: a wait still going on is not in it yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedstat {
    pub cpu_ns: u64,
    pub run_delay_ns: u64,
}

/// Parse a `schedstat` line (`cpu_ns run_delay_ns timeslices`).
pub fn parse_schedstat(line: &str) -> Option<Schedstat> {
    let mut f = line.split_whitespace().map(|w| w.parse::<u64>().ok());
    Some(Schedstat {
        cpu_ns: f.next()??,
        run_delay_ns: f.next()??,
    })
}

/// Read `/proc/self/smaps_rollup`.
pub fn process_memory() -> ProcessMemory {
    let r = smaps_rollup();
    ProcessMemory {
        rss: r.rss,
        pss: r.pss,
    }
}

/// The process's RSS from `/proc/self/statm` (0 where it cannot be read): the kernel keeps
/// this count, so reading it costs nothing, unlike [`smaps_rollup`], which walks every page
/// table of the process (tens of milliseconds for a heap of gigabytes, and it holds up the
/// process's page faults meanwhile). Counts a multi-mapped page once per mapping, as RSS does.
pub fn resident_bytes() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = text
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * page.max(0) as u64
}

/// The value of a `Name:   123 kB` line, in bytes.
fn kb_field(line: &str) -> Option<(&str, u64)> {
    let (name, rest) = line.split_once(':')?;
    let mut it = rest.split_whitespace();
    let v: u64 = it.next()?.parse().ok()?;
    match it.next() {
        Some("kB") => Some((name, v * 1024)),
        _ => None,
    }
}

/// The fields of `/proc/self/smaps_rollup` (the sums over every mapping), in bytes; all 0
/// where the file cannot be read (not Linux, or a kernel before 4.14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SmapsRollup {
    /// Resident: a page counts once per mapping of it in this process.
    pub rss: u64,
    /// Proportional: a page counts 1/n for each of the n mappings of it (in any process).
    pub pss: u64,
    /// Pss of anonymous memory.
    pub pss_anon: u64,
    /// Pss of file pages.
    pub pss_file: u64,
    /// Pss of shared memory (memfd, tmpfs, `MAP_SHARED` anonymous): the heap's pages.
    pub pss_shmem: u64,
    pub shared_clean: u64,
    pub shared_dirty: u64,
    pub private_clean: u64,
    pub private_dirty: u64,
    /// Anonymous (private, not file-backed) resident memory.
    pub anonymous: u64,
    pub anon_huge_pages: u64,
    pub swap: u64,
    pub swap_pss: u64,
    pub locked: u64,
}

/// Parse `smaps_rollup` text.
pub fn parse_smaps_rollup(text: &str) -> SmapsRollup {
    let mut r = SmapsRollup::default();
    for (name, v) in text.lines().filter_map(kb_field) {
        let slot = match name {
            "Rss" => &mut r.rss,
            "Pss" => &mut r.pss,
            "Pss_Anon" => &mut r.pss_anon,
            "Pss_File" => &mut r.pss_file,
            "Pss_Shmem" => &mut r.pss_shmem,
            "Shared_Clean" => &mut r.shared_clean,
            "Shared_Dirty" => &mut r.shared_dirty,
            "Private_Clean" => &mut r.private_clean,
            "Private_Dirty" => &mut r.private_dirty,
            "Anonymous" => &mut r.anonymous,
            "AnonHugePages" => &mut r.anon_huge_pages,
            "Swap" => &mut r.swap,
            "SwapPss" => &mut r.swap_pss,
            "Locked" => &mut r.locked,
            _ => continue,
        };
        *slot = v;
    }
    r
}

/// Read `/proc/self/smaps_rollup`.
pub fn smaps_rollup() -> SmapsRollup {
    parse_smaps_rollup(&std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default())
}

/// One mapping of `/proc/self/smaps`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    /// `rwxp` / `rw-s`, as in `/proc/self/maps`.
    pub perms: String,
    pub inode: u64,
    /// The path or pseudo-path (`[stack]`, `[heap]`, `/memfd:name (deleted)`); empty for
    /// anonymous memory.
    pub path: String,
    pub rss: u64,
    pub pss: u64,
    pub anonymous: u64,
    pub swap: u64,
}

impl Mapping {
    /// Bytes of address space.
    pub fn size(&self) -> u64 {
        self.end - self.start
    }
    fn is_anon(&self) -> bool {
        self.inode == 0 && self.path.is_empty()
    }
    fn is_private_rw(&self) -> bool {
        self.perms.starts_with("rw") && self.perms.ends_with('p')
    }
    fn is_inaccessible(&self) -> bool {
        self.perms.starts_with("---")
    }
}

/// Parse `smaps` text.
pub fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut maps: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        if let Some((name, v)) = kb_field(line) {
            if let Some(m) = maps.last_mut() {
                match name {
                    "Rss" => m.rss = v,
                    "Pss" => m.pss = v,
                    "Anonymous" => m.anonymous = v,
                    "Swap" => m.swap = v,
                    _ => {}
                }
            }
            continue;
        }
        // A header: `start-end perms offset dev inode [path]`.
        let mut it = line.splitn(6, ' ');
        let (Some(range), Some(perms), Some(_off), Some(_dev), Some(inode)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let Some((s, e)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(inode)) = (
            u64::from_str_radix(s, 16),
            u64::from_str_radix(e, 16),
            inode.parse::<u64>(),
        ) else {
            continue;
        };
        maps.push(Mapping {
            start,
            end,
            perms: perms.to_string(),
            inode,
            path: it.next().unwrap_or("").trim().to_string(),
            ..Mapping::default()
        });
    }
    maps
}

/// Read `/proc/self/smaps` (one pass over every mapping: milliseconds for a big process).
pub fn smaps() -> Vec<Mapping> {
    parse_smaps(&std::fs::read_to_string("/proc/self/smaps").unwrap_or_default())
}

/// What a mapping is, as far as `smaps` and a few known ranges tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum MappingKind {
    /// Inside one of the ranges the caller named as the heap's views.
    HeapView,
    /// `[stack]`: the main thread's stack.
    MainStack,
    /// A thread stack: private read-write anonymous memory right above an inaccessible guard
    /// of at most 64 KiB (how glibc's `pthread_create` maps a stack). A heuristic.
    ThreadStack,
    /// A glibc malloc arena heap (a thread arena's 64 MiB-aligned reservation, its usable
    /// part and its `PROT_NONE` rest) or `[heap]` (the main arena's `brk` memory).
    MallocArena,
    /// Backed by a file on disk: the executable, shared libraries, mapped files.
    File,
    /// Shared memory not in the heap ranges (another memfd, tmpfs, `MAP_SHARED` anonymous).
    SharedMemory,
    /// Other anonymous memory: malloc's mmapped chunks, native pools, other allocators.
    Anonymous,
    /// `[vdso]`, `[vvar]`, `[vsyscall]` and the like.
    Kernel,
}

impl MappingKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [MappingKind; 8] = [
        MappingKind::HeapView,
        MappingKind::MallocArena,
        MappingKind::MainStack,
        MappingKind::ThreadStack,
        MappingKind::Anonymous,
        MappingKind::SharedMemory,
        MappingKind::File,
        MappingKind::Kernel,
    ];

    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            MappingKind::HeapView => "heap views",
            MappingKind::MainStack => "main stack",
            MappingKind::ThreadStack => "thread stacks",
            MappingKind::MallocArena => "malloc arenas",
            MappingKind::File => "mapped files",
            MappingKind::SharedMemory => "other shared memory",
            MappingKind::Anonymous => "other anonymous",
            MappingKind::Kernel => "kernel ([vdso] ...)",
        }
    }
}

/// glibc's thread arenas reserve heaps of this size, aligned to it (`HEAP_MAX_SIZE` on 64-bit).
const MALLOC_HEAP_SIZE: u64 = 64 << 20;
/// The largest guard below a thread stack the heuristic accepts.
const MAX_GUARD: u64 = 64 << 10;

/// The usable part of a glibc thread-arena heap: private read-write anonymous memory at a
/// 64 MiB boundary, the whole 64 MiB or followed by the inaccessible rest of the reservation.
fn is_arena_heap(m: &Mapping, next: Option<&Mapping>) -> bool {
    m.start.is_multiple_of(MALLOC_HEAP_SIZE)
        && m.is_anon()
        && m.is_private_rw()
        && (m.size() == MALLOC_HEAP_SIZE
            || next.is_some_and(|n| {
                n.is_anon()
                    && n.is_inaccessible()
                    && n.start == m.end
                    && n.end == m.start + MALLOC_HEAP_SIZE
            }))
}

/// The inaccessible rest of an arena heap whose usable part `prev` is.
fn is_arena_tail(m: &Mapping, prev: Option<&Mapping>, prev_is_arena: bool) -> bool {
    m.is_anon()
        && m.is_inaccessible()
        && prev_is_arena
        && prev.is_some_and(|p| p.end == m.start && m.end - p.start == MALLOC_HEAP_SIZE)
}

/// The kind of each of `maps` (sorted by address, as `/proc` lists them); `heap` are the
/// address ranges `[start, end)` of the heap's views.
pub fn classify(maps: &[Mapping], heap: &[(u64, u64)]) -> Vec<MappingKind> {
    let in_heap = |m: &Mapping| heap.iter().any(|&(s, e)| m.start >= s && m.end <= e);
    let mut kinds: Vec<MappingKind> = Vec::with_capacity(maps.len());
    for (i, m) in maps.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| &maps[j]);
        let next = maps.get(i + 1);
        let kind = if in_heap(m) {
            MappingKind::HeapView
        } else if m.path == "[stack]" {
            MappingKind::MainStack
        } else if m.path == "[heap]" {
            MappingKind::MallocArena
        } else if m.path.starts_with('[') {
            MappingKind::Kernel
        } else if m.perms.ends_with('s') && (m.inode == 0 || m.path.starts_with("/memfd:")) {
            MappingKind::SharedMemory
        } else if !m.is_anon() {
            MappingKind::File
        } else if is_arena_heap(m, next)
            || is_arena_tail(m, prev, kinds.last() == Some(&MappingKind::MallocArena))
        {
            MappingKind::MallocArena
        } else if m.is_private_rw()
            && prev.is_some_and(|p| {
                p.is_anon() && p.is_inaccessible() && p.end == m.start && p.size() <= MAX_GUARD
            })
        {
            MappingKind::ThreadStack
        } else {
            MappingKind::Anonymous
        };
        kinds.push(kind);
    }
    kinds
}

/// The mappings of one kind, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CategoryUsage {
    pub mappings: u64,
    /// Address space.
    pub size: u64,
    pub rss: u64,
    pub pss: u64,
    pub swap: u64,
}

/// One kind's line of a [`SmapsBreakdown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Category {
    pub kind: MappingKind,
    pub name: &'static str,
    #[serde(flatten)]
    pub usage: CategoryUsage,
}

/// `smaps` summed per [`MappingKind`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct SmapsBreakdown {
    /// One per kind, in [`MappingKind::ALL`] order.
    pub categories: Vec<Category>,
    /// All mappings.
    pub total: CategoryUsage,
}

impl SmapsBreakdown {
    /// The usage of `kind`.
    pub fn get(&self, kind: MappingKind) -> CategoryUsage {
        self.categories
            .iter()
            .find(|c| c.kind == kind)
            .map(|c| c.usage)
            .unwrap_or_default()
    }
}

/// Sum `maps` per kind.
pub fn breakdown(maps: &[Mapping], heap: &[(u64, u64)]) -> SmapsBreakdown {
    let kinds = classify(maps, heap);
    let mut b = SmapsBreakdown {
        categories: MappingKind::ALL
            .iter()
            .map(|&kind| Category {
                kind,
                name: kind.name(),
                usage: CategoryUsage::default(),
            })
            .collect(),
        total: CategoryUsage::default(),
    };
    let add = |u: &mut CategoryUsage, m: &Mapping| {
        u.mappings += 1;
        u.size += m.size();
        u.rss += m.rss;
        u.pss += m.pss;
        u.swap += m.swap;
    };
    for (m, k) in maps.iter().zip(kinds) {
        let c = b
            .categories
            .iter_mut()
            .find(|c| c.kind == k)
            .expect("every kind is listed");
        add(&mut c.usage, m);
        add(&mut b.total, m);
    }
    b
}

/// glibc malloc's view of itself: `mallinfo2()` and the arena count from `malloc_info()`.
/// `available` is false (and every number 0) on other C libraries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MallocStats {
    pub available: bool,
    /// Arenas (the main one and the per-thread ones, up to 8 per CPU).
    pub arenas: u64,
    /// Bytes the arenas got from the system (`brk` and arena heaps): `mallinfo2().arena`.
    pub arena_bytes: u64,
    /// Bytes in use in the arenas (`uordblks`).
    pub in_use_bytes: u64,
    /// Free bytes kept in the arenas (`fordblks`): what `malloc_trim` could give back.
    pub free_bytes: u64,
    /// Large allocations mapped one by one (`hblks`, `hblkhd`): not in any arena.
    pub mmapped_chunks: u64,
    pub mmapped_bytes: u64,
}

impl MallocStats {
    /// Bytes allocated through malloc and not freed: in arenas and mmapped.
    pub fn allocated_bytes(&self) -> u64 {
        self.in_use_bytes + self.mmapped_bytes
    }
}

/// Read glibc malloc's statistics.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn malloc_stats() -> MallocStats {
    // SAFETY: mallinfo2 takes no arguments and returns a struct by value (glibc >= 2.33).
    let mi = unsafe { libc::mallinfo2() };
    MallocStats {
        available: true,
        arenas: malloc_arena_count(),
        arena_bytes: mi.arena as u64,
        in_use_bytes: mi.uordblks as u64,
        free_bytes: mi.fordblks as u64,
        mmapped_chunks: mi.hblks as u64,
        mmapped_bytes: mi.hblkhd as u64,
    }
}

/// Give the free memory glibc malloc holds back to the system (`malloc_trim(0)`); returns
/// true if some was released. Between runs measured in one process, so that a run's Pss does
/// not carry the free arena memory of the runs before it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim_malloc() -> bool {
    // SAFETY: malloc_trim takes a size and only returns free memory of malloc's own arenas to
    // the system; it is thread-safe (it locks each arena) and touches no memory in use.
    unsafe { libc::malloc_trim(0) != 0 }
}

/// Give free malloc memory back (not glibc: nothing to do).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim_malloc() -> bool {
    false
}

/// Read glibc malloc's statistics (not glibc: nothing to read).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn malloc_stats() -> MallocStats {
    MallocStats::default()
}

/// The number of `<heap nr=` elements `malloc_info` prints: one per arena.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn malloc_arena_count() -> u64 {
    let mut buf: *mut libc::c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream stores the buffer pointer and size through the two valid
    // pointers it is given (updated on fflush/fclose); it returns NULL on failure.
    let f = unsafe { libc::open_memstream(&mut buf, &mut len) };
    if f.is_null() {
        return 0;
    }
    // SAFETY: `f` is the open stream just created; malloc_info writes XML to it. fclose
    // flushes it and sets `buf`/`len` to the final text, which we now own (freed below).
    let text = unsafe {
        libc::malloc_info(0, f);
        libc::fclose(f);
        if buf.is_null() {
            return 0;
        }
        let s = std::slice::from_raw_parts(buf as *const u8, len);
        let t = String::from_utf8_lossy(s).into_owned();
        libc::free(buf as *mut libc::c_void);
        t
    };
    text.matches("<heap nr=").count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
555555554000-555555556000 r--p 00000000 fe:00 1234                       /usr/bin/prog
Rss:                   8 kB
Pss:                   4 kB
Anonymous:             0 kB
555555556000-555555600000 rw-p 00000000 00:00 0                          [heap]
Rss:                 100 kB
Pss:                 100 kB
Anonymous:           100 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0 
Rss:                  64 kB
Pss:                  64 kB
Anonymous:            64 kB
7f0000100000-7f0004000000 ---p 00000000 00:00 0 
Rss:                   0 kB
Pss:                   0 kB
7f1000000000-7f1000001000 ---p 00000000 00:00 0 
Rss:                   0 kB
7f1000001000-7f1000201000 rw-p 00000000 00:00 0 
Rss:                  16 kB
Pss:                  16 kB
7f2000000000-7f2000400000 rw-s 00000000 00:01 77                         /memfd:zgc-rs-heap (deleted)
Rss:                 400 kB
Pss:                 200 kB
7f2100000000-7f2100400000 rw-s 00000000 00:01 77                         /memfd:zgc-rs-heap (deleted)
Rss:                 400 kB
Pss:                 200 kB
7f3000000000-7f3000200000 rw-p 00000000 00:00 0 
Rss:                  12 kB
Pss:                  12 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Rss:                  20 kB
Pss:                  20 kB
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   4 kB
Pss:                   0 kB
";

    #[test]
    fn smaps_mappings_are_classified_and_summed_per_kind() {
        let maps = parse_smaps(SMAPS);
        assert_eq!(maps.len(), 11);
        assert_eq!(maps[0].path, "/usr/bin/prog");
        assert_eq!((maps[1].rss, maps[1].anonymous), (100 << 10, 100 << 10));
        assert_eq!(maps[6].path, "/memfd:zgc-rs-heap (deleted)");
        let heap = [(0x7f20_0000_0000, 0x7f20_1000_0000)];
        let kinds = classify(&maps, &heap);
        use MappingKind::*;
        assert_eq!(
            kinds,
            [
                File,
                MallocArena,
                MallocArena,
                MallocArena,
                Anonymous,
                ThreadStack,
                HeapView,
                SharedMemory,
                Anonymous,
                MainStack,
                Kernel
            ]
        );
        let b = breakdown(&maps, &heap);
        assert_eq!(b.total.mappings, 11);
        assert_eq!(b.total.rss, maps.iter().map(|m| m.rss).sum::<u64>());
        let arenas = b.get(MallocArena);
        assert_eq!((arenas.mappings, arenas.rss), (3, 164 << 10));
        assert_eq!(b.get(HeapView).pss, 200 << 10);
        assert_eq!(
            b.categories.iter().map(|c| c.usage.pss).sum::<u64>(),
            b.total.pss
        );
    }

    #[test]
    fn rollup_fields_are_parsed_in_bytes() {
        let r = parse_smaps_rollup(
            "55-7f ---p 00000000 00:00 0   [rollup]\nRss:  1768 kB\nPss:   226 kB\n\
             Pss_Shmem:  3 kB\nAnonymous:  112 kB\nTHPeligible: 0\n",
        );
        assert_eq!(
            (r.rss, r.pss, r.pss_shmem),
            (1768 << 10, 226 << 10, 3 << 10)
        );
        assert_eq!(r.anonymous, 112 << 10);
    }

    #[test]
    fn this_process_reads_consistently() {
        let r = smaps_rollup();
        assert!(r.rss > 0 && r.pss > 0 && r.pss <= r.rss, "{r:?}");
        assert!(r.pss_anon + r.pss_file + r.pss_shmem <= r.pss + (64 << 10));
        let b = breakdown(&smaps(), &[]);
        assert!(b.total.mappings > 5);
        assert!(
            b.get(MappingKind::File).rss > 0,
            "the executable is a mapped file"
        );
        assert!(count_threads() >= 1);
        let m = malloc_stats();
        if cfg!(target_env = "gnu") {
            assert!(m.available && m.arenas >= 1, "{m:?}");
            assert!(m.arena_bytes >= m.in_use_bytes, "{m:?}");
        }
    }
}
