//! Huge pages for the heap: the `HugePages` setting and the check of what the system allows
//! (ZGC's `-XX:+UseLargePages` and `-XX:+UseTransparentHugePages`, `ZLargePages`).
//!
//! A heap of gigabytes on 4 KiB pages needs hundreds of thousands of page-table entries per
//! view, and a marking or relocating thread that walks it misses the TLB on almost every
//! object. A 2 MiB page covers a whole granule with one entry. Linux offers two ways to back a
//! memfd, the heap's one file, with them:
//!
//! - **Transparent huge pages for shmem** (`transparent`). A memfd is a shmem (tmpfs) file.
//!   The kernel gives shmem 2 MiB pages when `/sys/kernel/mm/transparent_hugepage/shmem_enabled`
//!   allows it: `always`, `within_size` or `force` for every shmem file, `advise` only for
//!   memory faulted in through a mapping marked `madvise(MADV_HUGEPAGE)`; `never` and `deny`
//!   refuse. The heap marks each view mapping so, and commits a granule by faulting it in
//!   through a marked temporary mapping (`MADV_POPULATE_WRITE`): a plain `fallocate` has no
//!   mapping, so under `advise` it would fill the file with 4 KiB pages that no later mapping
//!   turns into huge ones. The kernel may still fall back to 4 KiB pages when it finds no free
//!   2 MiB of contiguous memory; the run's report says how much of the heap got huge pages.
//!   This is ZGC's `-XX:+UseTransparentHugePages`, which also commits through `madvise`d
//!   mappings of its tmpfs file and asks for `shmem_enabled` = `advise`.
//! - **hugetlbfs** (`hugetlb`). The memfd is created with `MFD_HUGETLB | MFD_HUGE_2MB`: its
//!   memory comes only from the kernel's pool of reserved 2 MiB pages
//!   (`vm.nr_hugepages`, or `/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages`), which
//!   nothing else can use while reserved and which never falls back to small pages. Committing
//!   a granule takes a pool page with `fallocate`, so a missing page is a commit error at once,
//!   not a `SIGBUS` at the first touch. This is ZGC's `-XX:+UseLargePages` (explicit large
//!   pages), which needs the pool reserved ahead, as here.
//!
//! The granule is 2 MiB, the huge page size, so every commit, mapping and uncommit is whole
//! huge pages. [`HugePageSystem::check`] runs when a heap is created: when the system does not
//! allow the setting, the heap is refused with an error that names the file or sysctl to
//! change and the value to give, never created on small pages unannounced.

use crate::error::HeapError;
use crate::GRANULE_SIZE;
use std::path::Path;

/// The size of the huge pages the heap uses: 2 MiB, one granule.
pub const HUGE_PAGE_SIZE: u64 = 2 << 20;
const _: () = assert!(HUGE_PAGE_SIZE == GRANULE_SIZE);

/// The switch for shmem transparent huge pages.
pub const SHMEM_ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
/// The per-size switch of 2 MiB shmem huge pages (kernels since 6.11); `inherit` follows
/// [`SHMEM_ENABLED`].
pub const SHMEM_ENABLED_2M: &str =
    "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/shmem_enabled";
/// The kernel's pool of 2 MiB hugetlb pages.
pub const HUGETLB_2M: &str = "/sys/kernel/mm/hugepages/hugepages-2048kB";

/// Which pages back the heap.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum HugePages {
    /// 4 KiB pages (the default: works on every system without changes).
    #[default]
    Off,
    /// Transparent huge pages for shmem: `madvise(MADV_HUGEPAGE)` on the views, committed
    /// through a marked mapping; the kernel may fall back to 4 KiB pages.
    Transparent,
    /// The memfd from the hugetlb pool (`MFD_HUGETLB`), 2 MiB pages only.
    Hugetlb,
}

impl HugePages {
    /// Every setting, in the order the help lists them.
    pub const ALL: [HugePages; 3] = [HugePages::Off, HugePages::Transparent, HugePages::Hugetlb];

    /// The setting's name, as options and the environment spell it.
    pub fn name(self) -> &'static str {
        match self {
            HugePages::Off => "off",
            HugePages::Transparent => "transparent",
            HugePages::Hugetlb => "hugetlb",
        }
    }
}

impl std::fmt::Display for HugePages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for HugePages {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        HugePages::ALL
            .into_iter()
            .find(|h| h.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                format!("{s:?} is not a huge-page setting: give off, transparent or hugetlb")
            })
    }
}

/// What the system allows, read from `/sys` and `/proc`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HugePageSystem {
    /// The selected word of [`SHMEM_ENABLED`] (`never`, `advise`, ...); `None` when the file
    /// is missing (a kernel without transparent huge pages).
    pub shmem_enabled: Option<String>,
    /// The selected word of [`SHMEM_ENABLED_2M`]; `None` when the kernel has no such file.
    pub shmem_enabled_2m: Option<String>,
    /// 2 MiB pages in the hugetlb pool (`nr_hugepages` of [`HUGETLB_2M`]).
    pub nr_hugepages: u64,
    /// Pool pages no one has taken (`free_hugepages`).
    pub free_hugepages: u64,
    /// Free pool pages promised to mappings already made (`resv_hugepages`): not available.
    pub resv_hugepages: u64,
    /// The default huge page size (`Hugepagesize` of `/proc/meminfo`): the size
    /// `vm.nr_hugepages` counts in.
    pub default_huge_page_size: u64,
}

/// The word in brackets of a sysfs choice file: `always [advise] never` → `advise`.
pub fn selected_word(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

fn read_u64(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// A `/proc/meminfo` field in bytes (its kB value times 1024; 0 if missing).
pub fn meminfo_bytes(name: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo_field(&text, name) * 1024
}

/// A field's number in `/proc/meminfo` or `smaps_rollup` text (`ShmemPmdMapped:  2048 kB`).
pub fn meminfo_field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| {
            let (key, rest) = l.split_once(':')?;
            (key.trim() == name).then(|| rest.split_whitespace().next()?.parse().ok())?
        })
        .unwrap_or(0)
}

impl HugePageSystem {
    /// Read the system's settings now.
    pub fn read() -> HugePageSystem {
        let word = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|t| selected_word(&t))
        };
        HugePageSystem {
            shmem_enabled: word(SHMEM_ENABLED),
            shmem_enabled_2m: word(SHMEM_ENABLED_2M),
            nr_hugepages: read_u64(&format!("{HUGETLB_2M}/nr_hugepages")),
            free_hugepages: read_u64(&format!("{HUGETLB_2M}/free_hugepages")),
            resv_hugepages: read_u64(&format!("{HUGETLB_2M}/resv_hugepages")),
            default_huge_page_size: meminfo_bytes("Hugepagesize"),
        }
    }

    /// 2 MiB pool pages a new heap can take: free and not promised to another mapping.
    pub fn available_hugepages(&self) -> u64 {
        self.free_hugepages.saturating_sub(self.resv_hugepages)
    }

    /// Whether shmem transparent huge pages can be had through `madvise`: the switch that
    /// decides and its value, if they cannot.
    fn transparent_refusal(&self) -> Option<(&'static str, String)> {
        let refuses = |w: &str| w == "never" || w == "deny";
        match (&self.shmem_enabled, &self.shmem_enabled_2m) {
            (None, _) => Some((SHMEM_ENABLED, "missing".into())),
            // `deny` turns every size off, whatever the per-size switch says.
            (Some(w), _) if w == "deny" => Some((SHMEM_ENABLED, w.clone())),
            (_, Some(w)) if w != "inherit" && refuses(w) => Some((SHMEM_ENABLED_2M, w.clone())),
            (Some(w), Some(w2)) if w2 == "inherit" && refuses(w) => {
                Some((SHMEM_ENABLED, w.clone()))
            }
            (Some(w), None) if refuses(w) => Some((SHMEM_ENABLED, w.clone())),
            _ => None,
        }
    }

    /// Refuse `setting` for a heap of `max_heap` bytes, backed by a memfd or (`backing_dir`,
    /// see `Backing::directory`) a file in that directory, when this system does not allow
    /// it; the error says what to set. `off` is always allowed.
    pub fn check(
        &self,
        setting: HugePages,
        max_heap: u64,
        backing_dir: Option<&Path>,
    ) -> Result<(), HeapError> {
        match setting {
            HugePages::Off => Ok(()),
            HugePages::Transparent => {
                if let Some(dir) = backing_dir {
                    if fs_magic(dir) != Some(TMPFS_MAGIC) {
                        return Err(HeapError::HugePagesBacking {
                            setting: setting.name(),
                            dir: dir.to_path_buf(),
                            needs: "a tmpfs directory (transparent huge pages are for shmem \
                                    files), e.g. /dev/shm",
                        });
                    }
                }
                match self.transparent_refusal() {
                    None => Ok(()),
                    Some((file, value)) => {
                        Err(HeapError::TransparentHugePagesRefused { file, value })
                    }
                }
            }
            HugePages::Hugetlb => {
                if let Some(dir) = backing_dir {
                    if fs_magic(dir) != Some(HUGETLBFS_MAGIC) {
                        return Err(HeapError::HugePagesBacking {
                            setting: setting.name(),
                            dir: dir.to_path_buf(),
                            needs: "a hugetlbfs mount (e.g. mount -t hugetlbfs -o pagesize=2M \
                                    none /mnt/huge), or the default memfd backing",
                        });
                    }
                }
                let needed = max_heap.div_ceil(HUGE_PAGE_SIZE);
                let available = self.available_hugepages();
                if available >= needed {
                    return Ok(());
                }
                // Raise the pool by what is missing: the pages others use or have reserved
                // stay theirs.
                let suggested = self.nr_hugepages + (needed - available);
                let how = if self.default_huge_page_size == HUGE_PAGE_SIZE {
                    format!("sysctl -w vm.nr_hugepages={suggested}")
                } else {
                    format!("echo {suggested} > {HUGETLB_2M}/nr_hugepages")
                };
                Err(HeapError::HugePagesUnavailable {
                    needed,
                    available,
                    free: self.free_hugepages,
                    reserved: self.resv_hugepages,
                    nr_hugepages: self.nr_hugepages,
                    suggested,
                    how,
                })
            }
        }
    }
}

const TMPFS_MAGIC: i64 = 0x0102_1994;
const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;

/// The file system type of `dir` (`statfs`'s `f_type`), `None` if it cannot be read.
fn fs_magic(dir: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `st` is plain old data that statfs fills on success; zeroed is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a valid out pointer.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    Some(st.f_type as i64)
}

/// How much of this process's shared file memory is mapped with 2 MiB page-table entries
/// (`ShmemPmdMapped` + `FilePmdMapped` of `/proc/self/smaps_rollup`) and how much of its
/// hugetlb memory is mapped (`Shared_Hugetlb` + `Private_Hugetlb`), in bytes. The heap's
/// views map the same memory three times, so a heap wholly on huge pages counts up to three
/// times its committed bytes here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HugePageUse {
    /// `ShmemPmdMapped` + `FilePmdMapped`: transparent huge pages mapped by this process.
    pub pmd_mapped: u64,
    /// `Shared_Hugetlb` + `Private_Hugetlb`: hugetlb pages mapped by this process.
    pub hugetlb_mapped: u64,
    /// `ShmemHugePages` of `/proc/meminfo`: shmem memory on huge pages, system-wide.
    pub shmem_huge_pages_system: u64,
}

impl HugePageUse {
    /// Read this process's figures now.
    pub fn read() -> HugePageUse {
        let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
        let kb = |name: &str| meminfo_field(&rollup, name) * 1024;
        HugePageUse {
            pmd_mapped: kb("ShmemPmdMapped") + kb("FilePmdMapped"),
            hugetlb_mapped: kb("Shared_Hugetlb") + kb("Private_Hugetlb"),
            shmem_huge_pages_system: meminfo_bytes("ShmemHugePages"),
        }
    }
}

/// Which pages a heap's memory is on, read back from the kernel at the end of a run: what a
/// report states as the run's page size. Read per mapping from `/proc/self/smaps` over the
/// heap's view ranges (its page-table walk holds the memory-map lock: read it while no
/// mutator runs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageSizeReading {
    /// The setting the heap was created with.
    pub requested: HugePages,
    /// Bytes committed when read.
    pub committed: u64,
    /// Bytes of the heap mapped with 2 MiB entries, in the view that has the most of them
    /// (every view maps the same memory): `ShmemPmdMapped` + `FilePmdMapped`, or
    /// `Shared_Hugetlb` + `Private_Hugetlb` for hugetlb memory; at most `committed`.
    pub huge_bytes: u64,
}

impl PageSizeReading {
    /// Read the huge-page fields of the mappings inside `views` (start, end) from
    /// `smaps_text` (the text of `/proc/self/smaps`).
    pub fn from_smaps(
        smaps_text: &str,
        views: &[(u64, u64)],
        requested: HugePages,
        committed: u64,
    ) -> PageSizeReading {
        let mut per_view = vec![0u64; views.len()];
        let mut current: Option<usize> = None;
        for line in smaps_text.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-') {
                if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                    current = views.iter().position(|&(s, e)| a >= s && b <= e);
                    continue;
                }
            }
            let Some(v) = current else { continue };
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            if matches!(
                key,
                "ShmemPmdMapped" | "FilePmdMapped" | "Shared_Hugetlb" | "Private_Hugetlb"
            ) {
                let kb: u64 = rest
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                per_view[v] += kb * 1024;
            }
        }
        PageSizeReading {
            requested,
            committed,
            huge_bytes: per_view.into_iter().max().unwrap_or(0).min(committed),
        }
    }

    /// True if huge pages were asked for and the heap got none.
    pub fn got_none(&self) -> bool {
        self.requested != HugePages::Off && self.huge_bytes == 0
    }

    /// The page size as reports state it: `4 KiB`, `2 MiB (N MiB of the heap on huge pages)`,
    /// or `4 KiB: transparent asked, no huge pages used`.
    pub fn label(&self) -> String {
        if self.huge_bytes == 0 {
            return match self.requested {
                HugePages::Off => "4 KiB".into(),
                h => format!("4 KiB: {h} asked, no huge pages used"),
            };
        }
        let mib = self.huge_bytes >> 20;
        format!("2 MiB ({mib} MiB of the heap on huge pages)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_by_name_and_refuse_others() {
        for h in HugePages::ALL {
            assert_eq!(h.name().parse::<HugePages>(), Ok(h));
            assert_eq!(h.to_string().to_uppercase().parse::<HugePages>(), Ok(h));
        }
        let e = "thp".parse::<HugePages>().unwrap_err();
        assert!(e.contains("off, transparent or hugetlb"), "{e}");
    }

    #[test]
    fn the_selected_word_is_the_bracketed_one() {
        assert_eq!(
            selected_word("always within_size advise [never] deny force\n").as_deref(),
            Some("never")
        );
        assert_eq!(
            selected_word("always [inherit] within_size").as_deref(),
            Some("inherit")
        );
        assert_eq!(selected_word("nothing"), None);
    }

    #[test]
    fn the_reading_takes_the_view_with_most_huge_memory_and_says_when_none() {
        let smaps = "\
100000-300000 rw-s 00000000 00:01 5 /memfd:zgc-rs-heap (deleted)
Rss:                2048 kB
ShmemPmdMapped:     2048 kB
FilePmdMapped:         0 kB
Shared_Hugetlb:        0 kB
500000-900000 rw-s 00000000 00:01 5 /memfd:zgc-rs-heap (deleted)
ShmemPmdMapped:     4096 kB
a00000-c00000 rw-p 00000000 00:00 0
ShmemPmdMapped:     2048 kB
";
        let views = [(0x100000, 0x400000), (0x500000, 0x900000)];
        let r = PageSizeReading::from_smaps(smaps, &views, HugePages::Transparent, 64 << 20);
        assert_eq!(r.huge_bytes, 4 << 20);
        assert_eq!(r.label(), "2 MiB (4 MiB of the heap on huge pages)");
        assert!(!r.got_none());
        let none =
            PageSizeReading::from_smaps(smaps, &[(0xd00000, 0xe00000)], HugePages::Hugetlb, 1);
        assert!(none.got_none());
        assert_eq!(none.label(), "4 KiB: hugetlb asked, no huge pages used");
        let off = PageSizeReading {
            requested: HugePages::Off,
            ..none
        };
        assert_eq!(off.label(), "4 KiB");
        assert!(!off.got_none());
    }

    #[test]
    fn fields_are_read_by_exact_name() {
        let text = "ShmemHugePages:     4096 kB\nShmemPmdMapped:     2048 kB\n";
        assert_eq!(meminfo_field(text, "ShmemPmdMapped"), 2048);
        assert_eq!(meminfo_field(text, "ShmemHugePages"), 4096);
        assert_eq!(meminfo_field(text, "Shmem"), 0);
    }
}
