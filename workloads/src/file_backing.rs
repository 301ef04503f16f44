//! What the heap's file backing costs: the heap is one `memfd` mapped three times (ZGC's
//! `ZPhysicalMemoryBacking`), and this module measures, on the machine it runs on, what a
//! store or a load through such a mapping costs against `pwrite`/`pread` on the same file
//! descriptor (Java's `MappedByteBuffer` against `FileChannel.write`/`read`), what the first
//! touch of a page costs against a page already mapped (a page fault), and what `msync` costs
//! on a `memfd` against a file on disk (`MappedByteBuffer.force()`). The `file-backing` binary
//! prints the table; the case-studies chapter of the book reads it.

use std::ffi::CString;
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The size of one operation: a page.
pub const BLOCK: usize = 4096;

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Bytes of the file (a multiple of [`BLOCK`]).
    pub size: u64,
    /// Rounds of each measurement; the median is reported.
    pub rounds: u32,
    /// Directory of the on-disk file for the `msync` comparison.
    pub dir: PathBuf,
}

/// Why a measurement could not be made.
#[derive(Debug)]
pub enum BenchError {
    /// An option out of range: what to change.
    Option(String),
    /// A system call failed: which one, and the error.
    Os(&'static str, std::io::Error),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Option(m) => write!(f, "{m}"),
            BenchError::Os(call, e) => write!(f, "{call} failed: {e}"),
        }
    }
}

impl std::error::Error for BenchError {}

fn os(call: &'static str) -> BenchError {
    BenchError::Os(call, std::io::Error::last_os_error())
}

impl Options {
    /// Check the options: a size of whole pages between 1 MiB and 4 GiB, at least one round,
    /// a directory that exists.
    pub fn check(&self) -> Result<(), BenchError> {
        if !self.size.is_multiple_of(BLOCK as u64) || self.size < (1 << 20) || self.size > (4 << 30)
        {
            return Err(BenchError::Option(format!(
                "--size {}: give a multiple of 4K between 1M and 4G (e.g. --size 64M)",
                gc_core::format_size(self.size)
            )));
        }
        if self.rounds == 0 || self.rounds > 1000 {
            return Err(BenchError::Option(format!(
                "--rounds {}: give 1 to 1000",
                self.rounds
            )));
        }
        if !self.dir.is_dir() {
            return Err(BenchError::Option(format!(
                "--dir {}: not a directory; give one on a disk (not tmpfs) for the msync \
                 comparison",
                self.dir.display()
            )));
        }
        Ok(())
    }

    fn blocks(&self) -> usize {
        (self.size / BLOCK as u64) as usize
    }
}

/// A file (memfd or on disk) of a given size and one shared mapping of it.
struct Mapped {
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
}

impl Mapped {
    /// A memfd of `len` bytes; committed (`fallocate`, as the heap commits) when `commit`.
    fn memfd(len: usize, commit: bool) -> Result<Self, BenchError> {
        let name = CString::new("file-backing").expect("no NUL");
        // SAFETY: `name` is NUL-terminated; memfd_create returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(os("memfd_create"));
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Self::sized(fd, len, commit)
    }

    /// A file of `len` bytes created in `dir` and unlinked at once (as the heap's
    /// `Backing::Directory`), its blocks allocated when `commit`.
    fn on_disk(dir: &Path, len: usize, commit: bool) -> Result<Self, BenchError> {
        let path = dir.join(format!("file-backing.{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| BenchError::Os("creating a file in --dir", e))?;
        let _ = std::fs::remove_file(&path);
        Self::sized(OwnedFd::from(file), len, commit)
    }

    fn sized(fd: OwnedFd, len: usize, commit: bool) -> Result<Self, BenchError> {
        // SAFETY: `fd` is an open descriptor we own; ftruncate changes only its size.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(os("ftruncate"));
        }
        // SAFETY: as above; fallocate allocates the file's blocks (pages of a memfd).
        if commit && unsafe { libc::fallocate(fd.as_raw_fd(), 0, 0, len as libc::off_t) } != 0 {
            return Err(os("fallocate"));
        }
        let mut m = Mapped {
            fd,
            base: std::ptr::null_mut(),
            len,
        };
        m.remap()?;
        Ok(m)
    }

    /// Replace the mapping by a fresh one: no page of it is in the page table.
    fn remap(&mut self) -> Result<(), BenchError> {
        if !self.base.is_null() {
            // SAFETY: `base`/`len` is the mapping this struct made; nothing borrows it.
            unsafe { libc::munmap(self.base.cast(), self.len) };
            self.base = std::ptr::null_mut();
        }
        // SAFETY: a new shared mapping of our own descriptor, placed by the kernel.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                self.len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os("mmap"));
        }
        self.base = p.cast();
        Ok(())
    }

    fn block(&self, i: usize) -> *mut u8 {
        debug_assert!((i + 1) * BLOCK <= self.len);
        // SAFETY: `i` is a block inside the mapping (callers iterate over `len / BLOCK`).
        unsafe { self.base.add(i * BLOCK) }
    }

    /// Touch every page once by a store (faulting them in).
    fn touch_all(&self) {
        for i in 0..self.len / BLOCK {
            // SAFETY: block `i` lies inside the live, writable mapping.
            unsafe { self.block(i).write_volatile(1) };
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if !self.base.is_null() {
            // SAFETY: the mapping this struct made; dropped once.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
    }
}

/// One line of the result: what was measured, its median time per 4 KiB page and the
/// median time of a whole round (every page of the file once, or one `msync` call).
#[derive(Clone, Debug)]
pub struct Row {
    pub what: &'static str,
    pub ns_per_page: f64,
    pub ns_per_round: f64,
}

/// Blocks `0..n` in a random order (a fixed seed: the same order every run).
fn shuffled(n: usize) -> Vec<usize> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut v: Vec<usize> = (0..n).collect();
    v.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(42));
    v
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The medians over `rounds` of nanoseconds per page and per round: `f` does one round and
/// returns the time its measured part took and the pages it did.
fn measure(
    rounds: u32,
    mut f: impl FnMut() -> Result<(Duration, usize), BenchError>,
) -> Result<(f64, f64), BenchError> {
    let (mut per_page, mut per_round) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (took, pages) = f()?;
        per_page.push(took.as_nanos() as f64 / pages.max(1) as f64);
        per_round.push(took.as_nanos() as f64);
    }
    Ok((median(per_page), median(per_round)))
}

/// Time `work`, which does `pages` pages.
fn timed(
    pages: usize,
    work: impl FnOnce() -> Result<(), BenchError>,
) -> Result<(Duration, usize), BenchError> {
    let t = Instant::now();
    work()?;
    Ok((t.elapsed(), pages))
}

/// Write `buf` to block `i` of `m` through the mapping.
fn store(m: &Mapped, i: usize, buf: &[u8; BLOCK]) {
    // SAFETY: block `i` is inside the writable mapping; `buf` is a separate allocation.
    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), m.block(i), BLOCK) };
}

/// Read block `i` of `m` through the mapping into `buf`.
fn load(m: &Mapped, i: usize, buf: &mut [u8; BLOCK]) {
    // SAFETY: block `i` is inside the readable mapping; `buf` is a separate allocation.
    unsafe { std::ptr::copy_nonoverlapping(m.block(i), buf.as_mut_ptr(), BLOCK) };
}

fn pwrite(m: &Mapped, i: usize, buf: &[u8; BLOCK]) -> Result<(), BenchError> {
    // SAFETY: `buf` is BLOCK readable bytes; the offset is inside the file.
    let n = unsafe {
        libc::pwrite(
            m.fd.as_raw_fd(),
            buf.as_ptr().cast(),
            BLOCK,
            (i * BLOCK) as libc::off_t,
        )
    };
    if n != BLOCK as isize {
        return Err(os("pwrite"));
    }
    Ok(())
}

fn pread(m: &Mapped, i: usize, buf: &mut [u8; BLOCK]) -> Result<(), BenchError> {
    // SAFETY: `buf` is BLOCK writable bytes; the offset is inside the file.
    let n = unsafe {
        libc::pread(
            m.fd.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            BLOCK,
            (i * BLOCK) as libc::off_t,
        )
    };
    if n != BLOCK as isize {
        return Err(os("pread"));
    }
    Ok(())
}

fn msync(m: &Mapped) -> Result<(), BenchError> {
    // SAFETY: the whole live mapping this struct made.
    if unsafe { libc::msync(m.base.cast(), m.len, libc::MS_SYNC) } != 0 {
        return Err(os("msync"));
    }
    Ok(())
}

/// Every measurement, in the order printed.
pub fn run(o: &Options) -> Result<Vec<Row>, BenchError> {
    o.check()?;
    let n = o.blocks();
    let len = o.size as usize;
    let seq: Vec<usize> = (0..n).collect();
    let rnd = shuffled(n);
    let buf = Box::new([7u8; BLOCK]);
    let mut out = Box::new([0u8; BLOCK]);
    let mut rows = Vec::new();
    let mut row = |what, (ns_per_page, ns_per_round)| {
        rows.push(Row {
            what,
            ns_per_page,
            ns_per_round,
        })
    };

    // Reads and writes on a committed memfd whose mapping is faulted in.
    let m = Mapped::memfd(len, true)?;
    m.touch_all();
    for (order, name_store, name_pwrite, name_load, name_pread) in [
        (
            &seq,
            "sequential 4 KiB store through the mapping",
            "sequential 4 KiB pwrite on the fd",
            "sequential 4 KiB load through the mapping",
            "sequential 4 KiB pread on the fd",
        ),
        (
            &rnd,
            "random 4 KiB store through the mapping",
            "random 4 KiB pwrite on the fd",
            "random 4 KiB load through the mapping",
            "random 4 KiB pread on the fd",
        ),
    ] {
        row(
            name_store,
            measure(o.rounds, || {
                timed(n, || {
                    order.iter().for_each(|&i| store(&m, i, &buf));
                    Ok(())
                })
            })?,
        );
        row(
            name_pwrite,
            measure(o.rounds, || {
                timed(n, || order.iter().try_for_each(|&i| pwrite(&m, i, &buf)))
            })?,
        );
        row(
            name_load,
            measure(o.rounds, || {
                timed(n, || {
                    order.iter().for_each(|&i| {
                        load(&m, i, &mut out);
                        std::hint::black_box(&out);
                    });
                    Ok(())
                })
            })?,
        );
        row(
            name_pread,
            measure(o.rounds, || {
                timed(n, || {
                    order.iter().try_for_each(|&i| {
                        pread(&m, i, &mut out)?;
                        std::hint::black_box(&out);
                        Ok(())
                    })
                })
            })?,
        );
    }

    // Page faults: the first store to each page of a fresh mapping, against a store to a
    // page already mapped.
    let mut m = Mapped::memfd(len, true)?;
    row(
        "first store to a page, memfd committed (fault maps it)",
        measure(o.rounds, || {
            m.remap()?;
            timed(n, || {
                m.touch_all();
                Ok(())
            })
        })?,
    );
    row(
        "store to a page already mapped (prefaulted)",
        measure(o.rounds, || {
            timed(n, || {
                m.touch_all();
                Ok(())
            })
        })?,
    );
    drop(m);
    row(
        "first store to a page, memfd not committed (fault allocates and zeroes it)",
        measure(o.rounds, || {
            let m = Mapped::memfd(len, false)?;
            timed(n, || {
                m.touch_all();
                Ok(())
            })
        })?,
    );

    // msync after every page was dirtied through the mapping: a memfd, then a file on disk;
    // and pwrite + fdatasync on the disk file (FileChannel.write + force).
    let m = Mapped::memfd(len, true)?;
    row(
        "msync(MS_SYNC) of a dirty memfd mapping, per page",
        measure(o.rounds, || {
            seq.iter().for_each(|&i| store(&m, i, &buf));
            timed(n, || msync(&m))
        })?,
    );
    drop(m);
    let d = Mapped::on_disk(&o.dir, len, true)?;
    row(
        "msync(MS_SYNC) of a dirty mapping of a file on disk, per page",
        measure(o.rounds, || {
            seq.iter().for_each(|&i| store(&d, i, &buf));
            timed(n, || msync(&d))
        })?,
    );
    row(
        "msync(MS_SYNC) of a clean mapping of a file on disk, per page",
        measure(o.rounds, || timed(n, || msync(&d)))?,
    );
    row(
        "pwrite of every page + fdatasync, file on disk, per page",
        measure(o.rounds, || {
            timed(n, || {
                seq.iter().try_for_each(|&i| pwrite(&d, i, &buf))?;
                // SAFETY: an open descriptor we own.
                if unsafe { libc::fdatasync(d.fd.as_raw_fd()) } != 0 {
                    return Err(os("fdatasync"));
                }
                Ok(())
            })
        })?,
    );
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(size: u64) -> Options {
        Options {
            size,
            rounds: 1,
            dir: std::env::temp_dir(),
        }
    }

    #[test]
    fn bad_options_say_what_to_change() {
        let e = opts(1000).check().unwrap_err().to_string();
        assert!(e.contains("multiple of 4K between 1M and 4G"), "{e}");
        let mut o = opts(1 << 20);
        o.rounds = 0;
        assert!(o.check().unwrap_err().to_string().contains("--rounds 0"));
        let mut o = opts(1 << 20);
        o.dir = PathBuf::from("/nonexistent-file-backing");
        assert!(o
            .check()
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
    }

    /// A store through the mapping is what pread sees on the same descriptor, and a pwrite is
    /// what a load through the mapping sees: one file, two ways in.
    #[test]
    fn the_mapping_and_the_descriptor_see_the_same_bytes() {
        let m = Mapped::memfd(1 << 20, true).unwrap();
        store(&m, 3, &[9u8; BLOCK]);
        let mut b = [0u8; BLOCK];
        pread(&m, 3, &mut b).unwrap();
        assert_eq!(b, [9u8; BLOCK]);
        pwrite(&m, 5, &[4u8; BLOCK]).unwrap();
        load(&m, 5, &mut b);
        assert_eq!(b, [4u8; BLOCK]);
    }

    #[test]
    fn every_measurement_gives_a_figure() {
        let rows = run(&opts(1 << 20)).unwrap();
        assert_eq!(rows.len(), 15);
        assert!(rows.iter().all(|r| r.ns_per_page > 0.0), "{rows:?}");
    }
}
