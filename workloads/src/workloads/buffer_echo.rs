//! `buffer-echo`: a TCP echo server on loopback whose threads are mutators of the heap, and
//! its clients.
//!
//! Each mutator thread is a server: it binds a listener on `127.0.0.1:0` (a free port, never
//! another interface), starts `--connections` client threads (plain threads, not mutators: a
//! GC pause does not stop them, so they see the server's pauses as latency, as a real client
//! would) and accepts their connections. A client sends a request — a 4-byte little-endian
//! length and a payload of `--message-size` bytes stamped with its sequence number — waits
//! for the echo, checks it byte for byte and records the round trip in the request-latency
//! histogram (from the moment the request was due when `--requests-per-sec` throttles it).
//! The server serves its connections in turn: it reads a request into a scratch vector,
//! copies it into a buffer of `--buffers` kind — a heap object's raw bytes (`heap`), a direct
//! buffer of its own mapping (`direct`, `Scope::alloc_direct`), a slot of the pool the run's
//! server threads share (`pooled`, `Scope::alloc_pooled`) — copies it out of that buffer into
//! a second vector and writes that back. The copies are the API's: a buffer's memory is
//! reached only through copying accessors.
//!
//! The server keeps the requests it echoed in a replay log: a ring (a heap object of
//! reference slots) of its last buffers, as many as make its share of the live-set target
//! (`--live-fraction` of the heap) at the mean message size, filled during set-up. So the
//! same bytes are retained in every mode — as heap objects the collector marks and moves
//! (`heap`), or as native memory behind small owner objects (`direct`, `pooled`) — and
//! memory over time shows where they went. A buffer pushed out of the log is garbage:
//! `--release on` frees a direct or pooled one at that moment, `off` leaves it to its owner's
//! cleaner once the collector finds the owner dead.
//!
//! Every socket call happens inside `Scope::blocking` or outside any scope, so a pause never
//! waits for a thread blocked in I/O. Server reads time out every [`POLL`] to look at the
//! run's stop flag; every other socket operation gives up after [`IO_TIMEOUT`] with an error
//! that says which. At the end of the run the server closes its sockets and joins its
//! clients, which stop at the same flag (or at the closed connection).

use crate::arg_parsers::parse_on_off;
use clap::Args;
use serde::{Deserialize, Serialize};
use crate::ctx::Ctx;
use crate::workload::{object_bytes, ThreadOutcome, Workload};
use crate::buffer_kind::BufferKind;
use crate::latency::LatencyHistogram;
use gc_runtime::native::NativePool;
use gc_runtime::{Local, Mutator, Scope};
use rand::Rng;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The defaults of the options, each written once and used by both `Default` and clap.
pub mod defaults {
    /// Message size: 4 KiB, every message alike.
    pub const MESSAGE_SIZE: &str = "4K";
    /// Connections per server thread.
    pub const CONNECTIONS: u64 = 4;
    /// The largest message (and `--connections`' upper bound).
    pub const MAX_MESSAGE_BYTES: u64 = 16 << 20;
    pub const MAX_CONNECTIONS: u64 = 64;
    /// Request rate limit; 0 = unthrottled.
    pub const REQUESTS_PER_SEC: u64 = 0;
}

/// A range of message sizes, `--message-size 4K` (all alike) or `1K-16K` (uniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSize {
    pub min_bytes: u64,
    pub max_bytes: u64,
}

impl std::fmt::Display for MessageSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = |n: u64| gc_core::format_size(n);
        if self.min_bytes == self.max_bytes {
            f.write_str(&b(self.min_bytes))
        } else {
            write!(f, "{}-{}", b(self.min_bytes), b(self.max_bytes))
        }
    }
}

/// Parse `--message-size`: a size (`4096`, `4K`) or a range `MIN-MAX` (`1K-16K`), each at
/// least 1 byte and at most 16M.
pub fn parse_message_size(s: &str) -> Result<MessageSize, String> {
    let one = |t: &str| -> Result<u64, String> {
        let n = gc_core::parse_size(t.trim())
            .map_err(|e| format!("--message-size {s:?}: {e}; give e.g. 4K or 1K-16K"))?;
        if n == 0 {
            return Err(format!(
                "--message-size {s:?}: a message needs at least 1 byte; give e.g. 4K or 1K-16K"
            ));
        }
        if n > defaults::MAX_MESSAGE_BYTES {
            return Err(format!(
                "--message-size {s:?}: at most 16M per message; give e.g. 4K or 1K-16K"
            ));
        }
        Ok(n)
    };
    let (min, max) = match s.split_once('-') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => {
            let n = one(s)?;
            (n, n)
        }
    };
    if min > max {
        return Err(format!(
            "--message-size {s:?}: the range's smaller size comes first, e.g. 1K-16K"
        ));
    }
    Ok(MessageSize {
        min_bytes: min,
        max_bytes: max,
    })
}

/// `buffer-echo` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferEchoParams {
    /// Where the server keeps each request while echoing it: heap (a collector object, bytes
    /// copied in and out), direct (Scope::alloc_direct per request: a native mapping of its
    /// own) or pooled (Scope::alloc_pooled from one native pool shared by the server threads).
    /// The last requests stay in a replay log of --live-fraction of the heap, in every kind.
    #[arg(long, value_enum, value_name = "KIND", default_value_t = BufferKind::Heap)]
    pub buffers: BufferKind,
    /// Message size: one size (4K) or a range MIN-MAX (1K-16K, uniform), 1 byte to 16M.
    #[arg(long, value_name = "SIZE", value_parser = parse_message_size,
          default_value = defaults::MESSAGE_SIZE)]
    pub message_size: MessageSize,
    /// Loopback connections per server thread, one client thread each; the server answers
    /// them in turn, one request at a time.
    #[arg(long, value_name = "N", default_value_t = defaults::CONNECTIONS,
          value_parser = clap::value_parser!(u64).range(1..=defaults::MAX_CONNECTIONS))]
    pub connections: u64,
    /// Requests per second per server thread; 0 = as fast as the server answers (latency
    /// is then measured without a schedule and not corrected for coordinated omission).
    #[arg(long, value_name = "N", default_value_t = defaults::REQUESTS_PER_SEC)]
    pub requests_per_sec: u64,
    /// Release each direct or pooled buffer once its echo is written (on), or drop it and
    /// leave the memory to the owner's cleaner when the collector finds it dead (off).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off,
          action = clap::ArgAction::Set)]
    pub release: bool,
}

impl Default for BufferEchoParams {
    fn default() -> Self {
        BufferEchoParams {
            buffers: BufferKind::Heap,
            message_size: parse_message_size(defaults::MESSAGE_SIZE)
                .expect("the default message size parses"),
            connections: defaults::CONNECTIONS,
            requests_per_sec: defaults::REQUESTS_PER_SEC,
            release: true,
        }
    }
}

/// The `buffer-echo` workload.
pub struct BufferEchoWorkload;

impl Workload for BufferEchoWorkload {
    const NAME: &'static str = "buffer-echo";
    const SUMMARY: &'static str = "A loopback TCP echo server whose threads are mutators, each \
         request held in a heap, direct or pooled buffer";
    const ABOUT: &'static str = "Run buffer-echo alone: a TCP echo server on 127.0.0.1 whose \
         threads are mutators, each serving --connections client threads; every request is held \
         in a heap, direct or pooled buffer (--buffers) while it is echoed. Reports requests/s, \
         request latency, and heap and direct bytes over time";
    const HAS_REQUESTS: bool = true;
    type Params = BufferEchoParams;

    fn buffers(p: &BufferEchoParams) -> Option<BufferKind> {
        Some(p.buffers)
    }

    fn buffers_mut(p: &mut BufferEchoParams) -> Option<&mut BufferKind> {
        Some(&mut p.buffers)
    }

    fn validate(p: &BufferEchoParams) -> Result<(), String> {
        let m = p.message_size;
        if m.min_bytes == 0 || m.min_bytes > m.max_bytes {
            return Err(format!("--message-size {m}: need 1 byte ≤ min ≤ max"));
        }
        Ok(())
    }

    fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &BufferEchoParams) -> Result<ThreadOutcome, String> {
        run(ctx, m, p)
    }
}

/// Shape id of a heap echo buffer.
const ECHO_BUFFER: u32 = 0x41;

/// Shape id of the replay log.
const REPLAY_LOG: u32 = 0x42;

/// The longest replay log (slots).
const MAX_LOG: u64 = 1 << 24;

/// Buffers in a server's replay log: `live_bytes` of messages of the mean size (at least one).
pub fn log_len(live_bytes: u64, p: &BufferEchoParams) -> u64 {
    let mean = (p.message_size.min_bytes + p.message_size.max_bytes) / 2;
    (live_bytes / object_bytes(0, mean.max(1))).clamp(1, MAX_LOG)
}

/// Bytes of the length prefix of a message.
const PREFIX: usize = 4;

/// How often a server's blocked read looks at the stop flag.
pub const POLL: Duration = Duration::from_millis(100);

/// The longest any other socket operation (connect, accept, a client's read or write, a
/// server's write) may take before the run fails: far longer than any pause or stall.
pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

fn io_err(what: &str, e: std::io::Error) -> String {
    format!("buffer-echo: {what}: {e}")
}

/// How a read of a whole frame ended.
enum Frame {
    /// A request of this many payload bytes is in the buffer.
    Got(usize),
    /// The peer closed the connection, or the run is over.
    Closed,
}

/// Read exactly `buf.len()` bytes, retrying on timeouts until `stop` is set (`Ok(false)`) or
/// `deadline` passes (an error). `Ok(false)` too when the peer closes before the first byte.
fn read_full(
    conn: &mut TcpStream,
    buf: &mut [u8],
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> Result<bool, String> {
    let mut got = 0;
    while got < buf.len() {
        match conn.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err("buffer-echo: the peer closed the connection mid-message".into()),
            Ok(n) => got += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.load(Ordering::Relaxed) {
                    return Ok(false);
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Err(format!(
                        "buffer-echo: no answer within {} s",
                        IO_TIMEOUT.as_secs()
                    ));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // At the end of the run the peer may close with bytes unread: a reset.
            Err(_) if stop.load(Ordering::Relaxed) => return Ok(false),
            Err(e) => return Err(io_err("read", e)),
        }
    }
    Ok(true)
}

/// Read one frame (prefix and payload) into `buf`, which grows as needed up to `max` bytes.
fn read_frame(
    conn: &mut TcpStream,
    buf: &mut Vec<u8>,
    max: usize,
    stop: &AtomicBool,
) -> Result<Frame, String> {
    let mut prefix = [0u8; PREFIX];
    if !read_full(conn, &mut prefix, stop, None)? {
        return Ok(Frame::Closed);
    }
    let len = u32::from_le_bytes(prefix) as usize;
    if len == 0 || len > max {
        return Err(format!(
            "buffer-echo: a request of {len} bytes, outside 1..={max}: the stream is corrupt"
        ));
    }
    buf.resize(len, 0);
    if !read_full(conn, &mut buf[..len], stop, None)? {
        return Ok(Frame::Closed);
    }
    Ok(Frame::Got(len))
}

/// The server's buffers: their kind, the pool of pooled ones, the replay log.
struct Buffers<'l> {
    kind: BufferKind,
    pool: Option<&'l NativePool>,
    release: bool,
    log: Local<'l>,
    log_len: u64,
    /// Buffers put in the log so far.
    pushed: u64,
}

fn echo_err(e: impl std::fmt::Display) -> String {
    format!("buffer-echo: {e}")
}

impl Buffers<'_> {
    /// Copy `input` into a fresh buffer and, with `out`, back out of it; then push the
    /// buffer into the replay log, retiring the one it replaces.
    fn echo(
        &mut self,
        s: &mut Scope<'_>,
        input: &[u8],
        out: Option<&mut [u8]>,
    ) -> Result<(), String> {
        let len = input.len();
        let slot = (self.pushed % self.log_len) as usize;
        self.pushed += 1;
        let (kind, pool, release, log) = (self.kind, self.pool, self.release, self.log);
        s.scope(|s| -> Result<(), String> {
            let b = match kind {
                BufferKind::Heap => {
                    let b = s.alloc(ECHO_BUFFER, 0, len).map_err(echo_err)?;
                    let o = s.get(b);
                    o.write_bytes(0, input);
                    if let Some(out) = out {
                        o.read_bytes(0, out);
                    }
                    b
                }
                BufferKind::Direct | BufferKind::Pooled => {
                    let b = match pool {
                        Some(pool) if kind == BufferKind::Pooled => s.alloc_pooled(pool, len),
                        None if kind == BufferKind::Pooled => {
                            return Err("buffer-echo: a pooled run without its pool".into())
                        }
                        _ => s.alloc_direct(len),
                    }
                    .map_err(echo_err)?;
                    let d = s.direct(b).map_err(echo_err)?;
                    d.write(0, input).map_err(echo_err)?;
                    if let Some(out) = out {
                        d.read(0, out).map_err(echo_err)?;
                    }
                    b
                }
            };
            if release && kind.is_native() {
                if let Some(old) = s.load(log, slot) {
                    s.direct(old)
                        .map_err(echo_err)?
                        .release()
                        .map_err(echo_err)?;
                }
            }
            s.store(log, slot, Some(b));
            Ok(())
        })
    }

    /// At the end of the run with `--release on`: release every buffer still in the log.
    fn release_all(&self, s: &mut Scope<'_>) -> Result<(), String> {
        if !(self.release && self.kind.is_native()) {
            return Ok(());
        }
        let log = self.log;
        for i in 0..self.log_len.min(self.pushed) as usize {
            s.scope(|s| -> Result<(), String> {
                if let Some(b) = s.load(log, i) {
                    s.direct(b).map_err(echo_err)?.release().map_err(echo_err)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Accept `n` connections within [`IO_TIMEOUT`].
fn accept_all(listener: &TcpListener, n: usize) -> Result<Vec<TcpStream>, String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| io_err("listener", e))?;
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut conns = Vec::with_capacity(n);
    while conns.len() < n {
        match listener.accept() {
            Ok((c, _)) => {
                c.set_nonblocking(false)
                    .and_then(|()| c.set_read_timeout(Some(POLL)))
                    .and_then(|()| c.set_write_timeout(Some(IO_TIMEOUT)))
                    .and_then(|()| c.set_nodelay(true))
                    .map_err(|e| io_err("server socket", e))?;
                conns.push(c);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(format!(
                        "buffer-echo: only {} of {n} clients connected within {} s",
                        conns.len(),
                        IO_TIMEOUT.as_secs()
                    ));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err("accept", e)),
        }
    }
    Ok(conns)
}

/// What one client measured.
struct ClientOutcome {
    requests: u64,
    latency: LatencyHistogram,
}

/// The payload of request `seq`: its sequence number at both ends, a byte pattern between.
fn fill_request(seq: u64, buf: &mut [u8]) {
    let b = (seq % 251) as u8;
    buf.fill(b);
    let stamp = seq.to_le_bytes();
    let n = buf.len().min(8);
    buf[..n].copy_from_slice(&stamp[..n]);
    if buf.len() >= 16 {
        let l = buf.len();
        buf[l - 8..].copy_from_slice(&stamp);
    }
}

/// One client: connect, wait for `go`, then request and check echoes until `stop`.
fn client(
    addr: SocketAddr,
    p: &BufferEchoParams,
    seed: u64,
    go: &AtomicBool,
    stop: &AtomicBool,
) -> Result<ClientOutcome, String> {
    let mut conn =
        TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| io_err("connect", e))?;
    conn.set_read_timeout(Some(POLL))
        .and_then(|()| conn.set_write_timeout(Some(IO_TIMEOUT)))
        .and_then(|()| conn.set_nodelay(true))
        .map_err(|e| io_err("client socket", e))?;
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(seed);
    let (min, max) = (p.message_size.min_bytes, p.message_size.max_bytes);
    let mut req = Vec::new();
    let mut reply = Vec::new();
    let mut latency = LatencyHistogram::new();
    while !go.load(Ordering::Acquire) {
        if stop.load(Ordering::Relaxed) {
            return Ok(ClientOutcome {
                requests: 0,
                latency,
            });
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Each connection gets its share of the server thread's rate.
    let interval = (p.requests_per_sec > 0)
        .then(|| Duration::from_secs_f64(p.connections as f64 / p.requests_per_sec as f64));
    let start = Instant::now();
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let due = match interval {
            Some(iv) => {
                let due = start + iv.mul_f64(seq as f64);
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                due
            }
            None => Instant::now(),
        };
        let len = rng.random_range(min..=max) as usize;
        req.resize(PREFIX + len, 0);
        req[..PREFIX].copy_from_slice(&(len as u32).to_le_bytes());
        fill_request(seq, &mut req[PREFIX..]);
        match conn.write_all(&req) {
            Ok(()) => {}
            Err(_) if stop.load(Ordering::Relaxed) => break,
            Err(e) => return Err(io_err("client write", e)),
        }
        reply.resize(PREFIX + len, 0);
        let deadline = Some(Instant::now() + IO_TIMEOUT);
        if !read_full(&mut conn, &mut reply, stop, deadline)? {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            return Err("buffer-echo: the server closed the connection".into());
        }
        if reply != req {
            return Err(format!(
                "buffer-echo: the echo of request {seq} ({len} bytes) differs from the request"
            ));
        }
        latency.record(due.elapsed().as_nanos() as u64);
        seq += 1;
    }
    Ok(ClientOutcome {
        requests: seq,
        latency,
    })
}

/// Lets the clients go when the server is done, whatever ended it: at the end of the run
/// they stop at the flag, and if the server unwinds (a panic) the flag is set for them, so
/// the scope that joins them never waits for clients waiting for a start that never comes.
struct ReleaseClients<'a> {
    go: &'a AtomicBool,
    stop: &'a AtomicBool,
}

impl Drop for ReleaseClients<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.go.store(true, Ordering::Release);
    }
}

/// Run buffer-echo's server on one mutator thread, with its clients.
pub fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &BufferEchoParams) -> Result<ThreadOutcome, String> {
    let n = p.connections.max(1) as usize;
    let max = p.message_size.max_bytes as usize;
    if p.message_size.min_bytes == 0 || max == 0 {
        return Err("buffer-echo: --message-size must be at least 1 byte".into());
    }
    let pool = ctx.pool;
    if p.buffers == BufferKind::Pooled && pool.is_none() {
        return Err("buffer-echo: --buffers pooled needs the run's pool".into());
    }
    let stop = ctx.stop_flag();
    let go = AtomicBool::new(false);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| io_err("bind", e))?;
    let addr = listener.local_addr().map_err(|e| io_err("bind", e))?;
    let mut rng = ctx.rng();
    let seeds: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    std::thread::scope(|sc| {
        let clients: Vec<_> = seeds
            .iter()
            .enumerate()
            .map(|(i, &seed)| {
                let go = &go;
                std::thread::Builder::new()
                    .name(format!("echo-client-{}-{i}", ctx.thread))
                    .spawn_scoped(sc, move || client(addr, p, seed, go, stop))
                    .map_err(|e| io_err("spawning a client thread", e))
            })
            .collect();
        let release = ReleaseClients { go: &go, stop };
        // Outside any scope: the mutator is a blocked thread while it waits for clients.
        let served = clients
            .iter()
            .try_for_each(|c| c.as_ref().map(|_| ()).map_err(Clone::clone))
            .and_then(|()| accept_all(&listener, n))
            .and_then(|mut conns| {
                let r = serve(ctx, m, p, pool, &mut conns, &go);
                // Closing the sockets wakes any client still waiting for an answer.
                drop(conns);
                r
            });
        if served.is_err() {
            ctx.abort();
        }
        drop(release);
        let mut requests = 0;
        let mut latency = LatencyHistogram::new();
        let mut first_err = served.err();
        for c in clients.into_iter().flatten() {
            match c.join() {
                Ok(Ok(o)) => {
                    requests += o.requests;
                    latency.add(&o.latency);
                }
                Ok(Err(e)) => {
                    ctx.abort();
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert("buffer-echo: a client thread panicked".into());
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(ThreadOutcome {
                operations: requests,
                latency: Some(latency),
            }),
        }
    })
}

/// The server loop: ready, then echo each connection's next request in turn until the run
/// is over or a client leaves.
fn serve(
    ctx: &Ctx<'_>,
    m: &mut Mutator,
    p: &BufferEchoParams,
    pool: Option<&NativePool>,
    conns: &mut [TcpStream],
    go: &AtomicBool,
) -> Result<(), String> {
    let stop = ctx.stop_flag();
    let max = p.message_size.max_bytes as usize;
    let log_len = log_len(ctx.live_bytes(), p);
    m.scope(|s| {
        let log = s.alloc(REPLAY_LOG, log_len as u32, 0).map_err(echo_err)?;
        let mut buffers = Buffers {
            kind: p.buffers,
            pool,
            release: p.release,
            log,
            log_len,
            pushed: 0,
        };
        // The history: a full log of messages of the mean size.
        let mean = ((p.message_size.min_bytes + p.message_size.max_bytes) / 2).max(1);
        let mut history = vec![0u8; mean as usize];
        for i in 0..log_len {
            fill_request(i, &mut history);
            buffers.echo(s, &history, None)?;
            if !ctx.running() {
                return Ok(());
            }
        }
        ctx.ready(s);
        go.store(true, Ordering::Release);
        let mut input = Vec::with_capacity(max);
        let mut out = Vec::with_capacity(PREFIX + max);
        'serve: while ctx.running() {
            for conn in conns.iter_mut() {
                let frame = s.blocking(|| read_frame(conn, &mut input, max, stop))?;
                let len = match frame {
                    Frame::Got(len) => len,
                    Frame::Closed => break 'serve,
                };
                out.resize(PREFIX + len, 0);
                out[..PREFIX].copy_from_slice(&(len as u32).to_le_bytes());
                buffers.echo(s, &input[..len], Some(&mut out[PREFIX..]))?;
                let written = s.blocking(|| conn.write_all(&out));
                match written {
                    Ok(()) => {}
                    Err(_) if !ctx.running() => break 'serve,
                    Err(e) => return Err(io_err("server write", e)),
                }
            }
        }
        buffers.release_all(s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_stamped_at_both_ends() {
        let mut b = vec![0u8; 32];
        fill_request(0x0102, &mut b);
        assert_eq!(&b[..8], &0x0102u64.to_le_bytes());
        assert_eq!(&b[24..], &0x0102u64.to_le_bytes());
        assert!(b[8..24].iter().all(|&x| x == (0x0102 % 251) as u8));
        let mut small = vec![0u8; 3];
        fill_request(0x0a0b0c, &mut small);
        assert_eq!(small, [0x0c, 0x0b, 0x0a]);
    }
}
