//! `message-engine`: an in-process message broker whose messages live in the heap.
//!
//! Each mutator thread runs its own engine: `--queues` point-to-point queues and `--topics`
//! publish-subscribe topics. A message is an object with two reference slots (headers, body)
//! and 24 raw bytes (publish time in ns since the thread started, sequence number within its
//! destination, destination index); its headers are a small table object of `--headers`
//! key/value pairs of string objects (`content-type`, `message-id`, `correlation-id`, ...,
//! fresh strings per message); its body is a byte array of `--body-bytes` (uniformly 50–150%),
//! stamped with the sequence number at both ends. Every destination keeps its messages in a
//! ring (an object of reference slots): the retention window. A publish overwrites the
//! destination's oldest message, which then becomes garbage, consumed or not; the rings are
//! sized so that the retained messages are about this thread's share of the live-set target
//! (`--retention-mb`). Consumers are cursors: one per queue (a queue message is consumed
//! once) and `--subscribers-per-topic` per topic (a topic message is consumed by every
//! subscriber). Set-up publishes enough messages to fill every ring (history the consumers
//! have already seen). One operation publishes one message to a uniformly random destination,
//! then polls the next eighth of the consumers in round-robin order (all of them when
//! `--messages-per-sec` throttles the thread: the producer would be idle anyway), each taking
//! every message pending for it: it checks the message's sequence number, looks up its
//! `message-id` header, copies the body out and checks its stamps. The end-to-end latency of
//! every delivery, from the publish time stored in the message (the moment the publish was
//! due, when throttled) to the end of its consumption, goes into the request-latency
//! histogram; an unthrottled engine so sees at most eight publishes of polling delay, plus
//! whatever pauses and allocation stalls held the thread up.
//!
//! With `--buffers direct` or `pooled` a body is a direct buffer instead of a byte array: a
//! small owner object in the body slot whose native bytes come from `Scope::alloc_direct` (a
//! mapping each) or `Scope::alloc_pooled` (the pool the run's threads share). Nobody releases
//! it: when the message leaves every ring its owner dies and the owner's cleaner frees the
//! memory, the JDK's `allocateDirect` discipline.

use crate::workload::LiveOption;
use clap::Args;
use serde::{Deserialize, Serialize};
use crate::ctx::Ctx;
use crate::pacer::Pacer;
use crate::workload::{object_bytes, ThreadOutcome, Workload};
use crate::buffer_kind::BufferKind;
use crate::latency::LatencyHistogram;
use gc_runtime::native::NativePool;
use gc_runtime::{DirectError, Local, Mutator, ObjRef, OutOfMemory, Scope};
use rand::rngs::SmallRng;
use rand::Rng;
use std::io::Write as _;
use std::time::Instant;

/// The defaults of the options, each written once and used by both `Default` and clap.
pub mod defaults {
    /// Point-to-point queues (each message consumed once).
    pub const QUEUES: u64 = 10;
    /// Publish-subscribe topics (each message consumed by every subscriber).
    pub const TOPICS: u64 = 90;
    /// Subscribers of each topic.
    pub const SUBSCRIBERS_PER_TOPIC: u64 = 3;
    /// Header entries per message.
    pub const HEADERS: u64 = 8;
    /// Mean body size.
    pub const BODY_BYTES: u64 = 1024;
    /// Publish rate limit; 0 = unthrottled.
    pub const MESSAGES_PER_SEC: u64 = 0;
}

/// `message-engine` options.
#[derive(Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageEngineParams {
    /// Point-to-point queues (each message consumed once).
    #[arg(long, value_name = "N", default_value_t = defaults::QUEUES)]
    pub queues: u64,
    /// Publish-subscribe topics (each message consumed by every subscriber).
    #[arg(long, value_name = "N", default_value_t = defaults::TOPICS)]
    pub topics: u64,
    /// Subscribers per topic.
    #[arg(long, value_name = "N", default_value_t = defaults::SUBSCRIBERS_PER_TOPIC,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub subscribers_per_topic: u64,
    /// Header entries per message (a map of small strings).
    #[arg(long, value_name = "N", default_value_t = defaults::HEADERS)]
    pub headers: u64,
    /// Mean message body size.
    #[arg(long, value_name = "BYTES", default_value_t = defaults::BODY_BYTES)]
    pub body_bytes: u64,
    /// Messages published per second per producer thread; 0 = as fast as possible.
    #[arg(long, value_name = "N", default_value_t = defaults::MESSAGES_PER_SEC)]
    pub messages_per_sec: u64,
    /// Where message bodies live: heap (byte-array objects), direct (Scope::alloc_direct per
    /// body: a native mapping each, freed by the cleaner once the message is garbage) or
    /// pooled (Scope::alloc_pooled from one native pool shared by the producer threads).
    #[arg(long, value_enum, value_name = "KIND", default_value_t = BufferKind::Heap)]
    #[serde(default)]
    pub buffers: BufferKind,
}

impl Default for MessageEngineParams {
    fn default() -> Self {
        MessageEngineParams {
            queues: defaults::QUEUES,
            topics: defaults::TOPICS,
            subscribers_per_topic: defaults::SUBSCRIBERS_PER_TOPIC,
            headers: defaults::HEADERS,
            body_bytes: defaults::BODY_BYTES,
            messages_per_sec: defaults::MESSAGES_PER_SEC,
            buffers: BufferKind::Heap,
        }
    }
}

/// The `message-engine` workload.
pub struct MessageEngineWorkload;

impl Workload for MessageEngineWorkload {
    const NAME: &'static str = "message-engine";
    const SUMMARY: &'static str = "Producers publish to queues and topics; consumed messages \
         become garbage";
    const ABOUT: &'static str = "Run message-engine alone: producers publish messages (headers + \
         body) to queues (consumed once) and topics (consumed by every subscriber); consumed \
         messages become garbage. Reports messages/s and end-to-end latency";
    const LIVE_OPTION: Option<LiveOption> = Some(LiveOption {
        long: "retention-mb",
        help: "Retention window in MiB: consumed messages stay reachable until this much newer \
             data has been published [default: --live-fraction of the heap]",
    });
    const HAS_REQUESTS: bool = true;
    type Params = MessageEngineParams;

    fn buffers(p: &MessageEngineParams) -> Option<BufferKind> {
        Some(p.buffers)
    }

    fn buffers_mut(p: &mut MessageEngineParams) -> Option<&mut BufferKind> {
        Some(&mut p.buffers)
    }

    fn validate(p: &MessageEngineParams) -> Result<(), String> {
        if p.queues + p.topics == 0 {
            return Err("--queues and --topics are both 0: messages need somewhere to go".into());
        }
        Ok(())
    }

    fn run(ctx: &Ctx<'_>, m: &mut Mutator, p: &MessageEngineParams) -> Result<ThreadOutcome, String> {
        run(ctx, m, p)
    }
}

/// Shape ids.
const ENGINE: u32 = 0x31;
const RING: u32 = 0x32;
const MESSAGE: u32 = 0x33;
const HEADERS: u32 = 0x34;
const STRING: u32 = 0x35;
const BODY: u32 = 0x36;

/// Reference slots and raw-byte offsets of a message.
const HEADERS_SLOT: usize = 0;
const BODY_SLOT: usize = 1;
const PUBLISHED_AT: usize = 0;
const SEQ_AT: usize = 8;
const DEST_AT: usize = 16;
const MESSAGE_RAW: usize = 24;

/// An unthrottled engine polls every consumer once per this many publishes.
pub const CONSUMER_ROUND: u64 = 8;

/// Shortest ring: longer than any consumer can lag behind (one round of publishes).
const MIN_RING: u64 = 2 * CONSUMER_ROUND;

/// Header names, in order; headers beyond them are `x-header-<i>`.
const HEADER_NAMES: [&str; 12] = [
    "content-type",
    "message-id",
    "correlation-id",
    "timestamp",
    "priority",
    "reply-to",
    "trace-id",
    "producer",
    "user-id",
    "routing-key",
    "expires",
    "encoding",
];

const CONTENT_TYPES: [&str; 3] = ["application/json", "text/plain", "application/x-protobuf"];

/// Index of the `message-id` header, the one consumers look up.
const MESSAGE_ID: usize = 1;

fn header_name(i: usize, buf: &mut Vec<u8>) {
    buf.clear();
    match HEADER_NAMES.get(i) {
        Some(n) => buf.extend_from_slice(n.as_bytes()),
        None => {
            let _ = write!(buf, "x-header-{i}");
        }
    }
}

/// Typical length of a generated header value (for sizing; values are 10–22 bytes).
const MEAN_VALUE_BYTES: u64 = 16;

/// The `message-id` of message `seq` of destination `dest` on producer `thread`.
fn message_id(thread: u32, dest: usize, seq: u64, buf: &mut Vec<u8>) {
    buf.clear();
    let _ = write!(buf, "{thread}-{dest}-{seq}");
}

fn header_value(
    i: usize,
    rng: &mut SmallRng,
    id: (u32, usize, u64),
    published_ns: u64,
    buf: &mut Vec<u8>,
) {
    buf.clear();
    let _ = match i {
        0 => write!(
            buf,
            "{}",
            CONTENT_TYPES[rng.random_range(0..CONTENT_TYPES.len())]
        ),
        MESSAGE_ID => {
            message_id(id.0, id.1, id.2, buf);
            Ok(())
        }
        3 => write!(buf, "{published_ns}"),
        4 => write!(buf, "{}", rng.random_range(0..10u32)),
        7 => write!(buf, "producer-{}", id.0),
        _ => write!(buf, "{:016x}", rng.random::<u64>()),
    };
}

/// Heap bytes of one message of the mean body size with `headers` headers.
pub fn message_bytes(headers: u64, body_bytes: u64) -> u64 {
    let mut name = Vec::new();
    let strings: u64 = (0..headers as usize)
        .map(|i| {
            header_name(i, &mut name);
            object_bytes(0, name.len() as u64) + object_bytes(0, MEAN_VALUE_BYTES)
        })
        .sum();
    object_bytes(2, MESSAGE_RAW as u64)
        + object_bytes(2 * headers, 0)
        + strings
        + object_bytes(0, body_bytes)
}

fn oom(e: OutOfMemory) -> String {
    format!("message-engine: {e}")
}

fn direct_err(e: impl std::fmt::Display) -> String {
    format!("message-engine: a direct body: {e}")
}

fn corrupt(what: String) -> String {
    format!("message-engine: {what}: the heap lost or mixed up objects")
}

/// The options of an engine.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub queues: u64,
    pub topics: u64,
    pub subscribers_per_topic: u64,
    pub headers: u64,
    pub body_bytes: u64,
    /// Retained messages per destination.
    pub ring_len: u64,
    /// Where bodies live.
    pub buffers: BufferKind,
}

impl EngineConfig {
    /// Rings sized so the retained messages take about `retention_bytes`.
    pub fn ring_len_for(retention_bytes: u64, destinations: u64, headers: u64, body: u64) -> u64 {
        // Each retained message also costs its ring slot.
        let per_message = message_bytes(headers, body) + 8;
        (retention_bytes / per_message)
            .div_ceil(destinations.max(1))
            .max(MIN_RING)
    }
}

struct Consumer {
    dest: usize,
    /// Sequence number of the next message to take.
    cursor: u64,
}

/// An engine rooted in the scope `'s` it was created in.
pub struct Engine<'s> {
    cfg: EngineConfig,
    thread: u32,
    root: Local<'s>,
    /// Next sequence number per destination.
    heads: Vec<u64>,
    consumers: Vec<Consumer>,
    next_consumer: usize,
    /// Messages overwritten before a consumer took them.
    lost: u64,
    delivered: u64,
    name: Vec<u8>,
    value: Vec<u8>,
    copy: Vec<u8>,
    /// The pool of `--buffers pooled` bodies.
    pool: Option<NativePool>,
}

impl<'s> Engine<'s> {
    /// An empty engine: one ring per destination, consumers at the start.
    pub fn new(s: &mut Scope<'s>, cfg: EngineConfig, thread: u32) -> Result<Self, String> {
        let dests = cfg.queues + cfg.topics;
        if dests == 0 {
            return Err("message-engine: no queues and no topics".into());
        }
        let root = s.alloc(ENGINE, dests as u32, 0).map_err(oom)?;
        for d in 0..dests {
            let ring = s.alloc(RING, cfg.ring_len as u32, 0).map_err(oom)?;
            s.store(root, d as usize, Some(ring));
        }
        let mut consumers = Vec::new();
        for d in 0..dests {
            let n = if d < cfg.queues {
                1
            } else {
                cfg.subscribers_per_topic.max(1)
            };
            for _ in 0..n {
                consumers.push(Consumer {
                    dest: d as usize,
                    cursor: 0,
                });
            }
        }
        Ok(Engine {
            heads: vec![0; dests as usize],
            cfg,
            thread,
            root,
            consumers,
            next_consumer: 0,
            lost: 0,
            delivered: 0,
            name: Vec::new(),
            value: Vec::new(),
            copy: Vec::new(),
            pool: None,
        })
    }

    /// Take `--buffers pooled` bodies from `pool`.
    pub fn with_pool(mut self, pool: NativePool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Number of destinations (queues first, then topics).
    pub fn destinations(&self) -> usize {
        self.heads.len()
    }

    /// Number of consumers.
    pub fn consumers(&self) -> usize {
        self.consumers.len()
    }

    /// Deliveries so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Messages that left the retention window before a consumer took them.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Mark everything published so far as consumed (history).
    pub fn skip_to_head(&mut self) {
        for c in &mut self.consumers {
            c.cursor = self.heads[c.dest];
        }
    }

    /// Publish one message to `dest`, stamped `published_ns`.
    pub fn publish(
        &mut self,
        s: &mut Scope<'_>,
        rng: &mut SmallRng,
        dest: usize,
        published_ns: u64,
    ) -> Result<(), String> {
        let seq = self.heads[dest];
        let body_size = (self.cfg.body_bytes as f64 * rng.random_range(0.5..1.5)) as usize;
        s.scope(|s| -> Result<(), String> {
            let msg = s.alloc(MESSAGE, 2, MESSAGE_RAW).map_err(oom)?;
            let n = self.cfg.headers as usize;
            let headers = s.alloc(HEADERS, 2 * n as u32, 0).map_err(oom)?;
            s.store(msg, HEADERS_SLOT, Some(headers));
            for i in 0..n {
                header_name(i, &mut self.name);
                header_value(
                    i,
                    rng,
                    (self.thread, dest, seq),
                    published_ns,
                    &mut self.value,
                );
                let k = s.alloc(STRING, 0, self.name.len()).map_err(oom)?;
                s.get(k).write_bytes(0, &self.name);
                let v = s.alloc(STRING, 0, self.value.len()).map_err(oom)?;
                s.get(v).write_bytes(0, &self.value);
                let h = s.get(headers);
                h.store(2 * i, Some(s.get(k)));
                h.store(2 * i + 1, Some(s.get(v)));
            }
            let stamp = seq.to_le_bytes();
            let body = match self.cfg.buffers {
                BufferKind::Heap => {
                    let body = s.alloc(BODY, 0, body_size).map_err(oom)?;
                    let b = s.get(body);
                    b.write_bytes(0, &stamp[..body_size.min(8)]);
                    if body_size >= 16 {
                        b.write_bytes(body_size - 8, &stamp);
                    }
                    body
                }
                kind => {
                    let body_size = body_size.max(1);
                    let body = match (kind, &self.pool) {
                        (BufferKind::Pooled, Some(pool)) => s.alloc_pooled(pool, body_size),
                        (BufferKind::Pooled, None) => {
                            return Err("message-engine: pooled bodies without a pool".into())
                        }
                        _ => s.alloc_direct(body_size),
                    }
                    .map_err(|e: DirectError| direct_err(e))?;
                    let d = s.direct(body).map_err(direct_err)?;
                    d.write(0, &stamp[..body_size.min(8)]).map_err(direct_err)?;
                    if body_size >= 16 {
                        d.write(body_size - 8, &stamp).map_err(direct_err)?;
                    }
                    body
                }
            };
            let m = s.get(msg);
            m.store(BODY_SLOT, Some(s.get(body)));
            m.write_u64(PUBLISHED_AT, published_ns);
            m.write_u64(SEQ_AT, seq);
            m.write_u64(DEST_AT, dest as u64);
            let ring = s
                .get(self.root)
                .load(dest)
                .ok_or_else(|| corrupt(format!("destination {dest} has no ring")))?;
            ring.store((seq % self.cfg.ring_len) as usize, Some(m));
            Ok(())
        })?;
        self.heads[dest] = seq + 1;
        Ok(())
    }

    /// Poll `n` consumers in round-robin order; every delivery's latency (from the publish
    /// stamp to `clock()` after consuming) goes into `latency`.
    pub fn poll(
        &mut self,
        s: &mut Scope<'_>,
        n: usize,
        clock: &impl Fn() -> u64,
        latency: &mut LatencyHistogram,
    ) -> Result<(), String> {
        for _ in 0..n.min(self.consumers.len()) {
            let c = self.next_consumer;
            self.next_consumer = (c + 1) % self.consumers.len();
            // A scope per consumer: the handles a drain roots (direct bodies) end with it.
            s.scope(|s| self.drain(s, c, clock, latency))?;
            s.poll();
        }
        Ok(())
    }

    /// Take every message pending for consumer `c`.
    fn drain(
        &mut self,
        s: &mut Scope<'_>,
        c: usize,
        clock: &impl Fn() -> u64,
        latency: &mut LatencyHistogram,
    ) -> Result<(), String> {
        let dest = self.consumers[c].dest;
        let head = self.heads[dest];
        let mut cur = self.consumers[c].cursor;
        if head - cur > self.cfg.ring_len {
            self.lost += head - self.cfg.ring_len - cur;
            cur = head - self.cfg.ring_len;
        }
        if cur == head {
            return Ok(());
        }
        // Rooted: a direct body's read borrows the scope exclusively (it may poll), which ends
        // every ObjRef.
        let ring = s.root(
            s.get(self.root)
                .load(dest)
                .ok_or_else(|| corrupt(format!("destination {dest} has no ring")))?,
        );
        while cur < head {
            let msg = s
                .get(ring)
                .load((cur % self.cfg.ring_len) as usize)
                .ok_or_else(|| corrupt(format!("message {cur} of destination {dest} is gone")))?;
            if msg.read_u64(SEQ_AT) != cur || msg.read_u64(DEST_AT) != dest as u64 {
                return Err(corrupt(format!(
                    "destination {dest} slot of message {cur} holds message {} of destination {}",
                    msg.read_u64(SEQ_AT),
                    msg.read_u64(DEST_AT)
                )));
            }
            let published = msg.read_u64(PUBLISHED_AT);
            self.check_headers(msg, dest, cur)?;
            let body = msg
                .load(BODY_SLOT)
                .ok_or_else(|| corrupt(format!("message {cur} has no body")))?;
            if self.cfg.buffers.is_native() {
                let body = s.root(body);
                let d = s.direct(body).map_err(direct_err)?;
                self.copy.resize(d.len(), 0);
                d.read(0, &mut self.copy).map_err(direct_err)?;
            } else {
                self.copy.resize(body.n_bytes(), 0);
                body.read_bytes(0, &mut self.copy);
            }
            let stamp = cur.to_le_bytes();
            let n = self.copy.len();
            if self.copy[..n.min(8)] != stamp[..n.min(8)]
                || (n >= 16 && self.copy[n - 8..] != stamp)
            {
                return Err(corrupt(format!(
                    "the body of message {cur} of destination {dest} carries another stamp"
                )));
            }
            latency.record(clock().saturating_sub(published));
            self.delivered += 1;
            cur += 1;
        }
        self.consumers[c].cursor = cur;
        Ok(())
    }

    /// Find the `message-id` header by name and check its value.
    fn check_headers(&mut self, msg: ObjRef<'_>, dest: usize, seq: u64) -> Result<(), String> {
        if self.cfg.headers as usize <= MESSAGE_ID {
            return Ok(());
        }
        let headers = msg
            .load(HEADERS_SLOT)
            .ok_or_else(|| corrupt(format!("message {seq} has no headers")))?;
        let key = HEADER_NAMES[MESSAGE_ID].as_bytes();
        for i in 0..headers.n_refs() / 2 {
            let Some(k) = headers.load(2 * i) else {
                continue;
            };
            if k.n_bytes() != key.len() {
                continue;
            }
            self.name.resize(key.len(), 0);
            k.read_bytes(0, &mut self.name);
            if self.name != key {
                continue;
            }
            let v = headers
                .load(2 * i + 1)
                .ok_or_else(|| corrupt(format!("header {i} of message {seq} has no value")))?;
            message_id(self.thread, dest, seq, &mut self.value);
            self.name.resize(v.n_bytes(), 0);
            v.read_bytes(0, &mut self.name);
            if self.name != self.value {
                return Err(corrupt(format!(
                    "message {seq} of destination {dest} has message-id {:?}",
                    String::from_utf8_lossy(&self.name)
                )));
            }
            return Ok(());
        }
        Err(corrupt(format!(
            "message {seq} of destination {dest} has no message-id header"
        )))
    }
}

/// Run message-engine on one mutator thread.
pub fn run(
    ctx: &Ctx<'_>,
    m: &mut Mutator,
    p: &MessageEngineParams,
) -> Result<ThreadOutcome, String> {
    let t0 = Instant::now();
    let clock = || t0.elapsed().as_nanos() as u64;
    let (queues, topics, headers, body_bytes) = (p.queues, p.topics, p.headers, p.body_bytes);
    let rate = p.messages_per_sec as f64;
    let dests = queues + topics;
    if dests == 0 {
        return Err("message-engine: --queues and --topics are both 0".into());
    }
    let cfg = EngineConfig {
        queues,
        topics,
        subscribers_per_topic: p.subscribers_per_topic.max(1),
        headers,
        body_bytes,
        ring_len: EngineConfig::ring_len_for(ctx.live_bytes(), dests, headers, body_bytes),
        buffers: p.buffers,
    };
    if p.buffers == BufferKind::Pooled && ctx.pool.is_none() {
        return Err("message-engine: --buffers pooled needs the run's pool".into());
    }
    let ring_len = cfg.ring_len;
    let mut rng = ctx.rng();
    m.scope(|s| {
        let mut engine = Engine::new(s, cfg, ctx.thread)?;
        if let Some(pool) = ctx.pool {
            engine = engine.with_pool(pool.clone());
        }
        // Fill every ring: the retained history.
        for i in 0..ring_len * dests {
            engine.publish(s, &mut rng, (i % dests) as usize, clock())?;
        }
        engine.skip_to_head();
        ctx.ready(s);
        let mut pacer = Pacer::new(rate);
        let polls = if pacer.interval().is_some() {
            engine.consumers()
        } else {
            engine.consumers().div_ceil(CONSUMER_ROUND as usize)
        };
        let mut latency = LatencyHistogram::new();
        let mut ops = 0u64;
        while ctx.running() {
            let due = pacer.wait(s);
            let published = due.saturating_duration_since(t0).as_nanos() as u64;
            let dest = rng.random_range(0..dests) as usize;
            engine.publish(s, &mut rng, dest, published)?;
            engine.poll(s, polls, &clock, &mut latency)?;
            ops += 1;
        }
        Ok(ThreadOutcome {
            operations: ops,
            latency: Some(latency),
        })
    })
}
