// The harness of the Java twins of pause-sweep's workloads: parses the options pause-sweep
// passes, starts the mutator threads (named mutator-0, mutator-1, ... as in the Rust harness),
// waits until every one has built its live set, then runs the 1 ms hiccup meter beside them
// for the measured duration and prints what pause-sweep's parser reads, one "twin KEY VALUE"
// line each, on stdout:
//
//   twin ready NANOS                 System.nanoTime() when the measured phase starts
//   twin start_ns NANOS              the same, repeated with the results
//   twin end_ns NANOS                System.nanoTime() when every mutator has stopped
//   twin operations N                operations of all mutators in the measured phase
//   twin hiccup_overshoot_ns A,B,..  every hiccup-meter round's overshoot over 1 ms
//   twin done
//   twin error MESSAGE               (instead, when a mutator failed; exit status 1)
//
// The GC log's "timenanos" decoration is System.nanoTime(), so these times and the log's
// share one clock. Plain Java, no libraries: compiled by pause-sweep with the JDK it runs.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.LockSupport;

public final class Twin {
    /** One workload's thread body: build the live set, call ctx.ready(), churn until stop. */
    interface Workload {
        long run(Ctx ctx) throws Exception;
    }

    /** What a mutator thread is handed (the Rust harness's Ctx). */
    static final class Ctx {
        final Map<String, String> opts;
        final int thread;
        final int threads;
        final long heapBytes;
        final long liveSetBytes;
        final long seed;
        /** Bytes of a reference field: 4 with compressed oops, 8 without (ZGC). */
        final int refBytes;
        private final CyclicBarrier ready;
        private final Twin twin;

        Ctx(Twin twin, int thread, CyclicBarrier ready) {
            this.twin = twin;
            this.opts = twin.opts;
            this.thread = thread;
            this.threads = twin.threads;
            this.heapBytes = twin.heapBytes;
            this.liveSetBytes = twin.liveSetBytes;
            this.seed = twin.seed;
            this.refBytes = twin.refBytes;
            this.ready = ready;
        }

        /** This thread's share of the live-set target. */
        long liveBytes() {
            return liveSetBytes / Math.max(1, threads);
        }

        /** The Rust harness's per-thread seed: seed ^ (thread + 1) * 0x9E3779B97F4A7C15. */
        Rng rng() {
            return new Rng(seed ^ ((thread + 1L) * 0x9E3779B97F4A7C15L));
        }

        long opt(String name) {
            String v = opts.get(name);
            if (v == null) {
                throw new IllegalArgumentException("missing option --" + name);
            }
            return Long.parseLong(v);
        }

        boolean has(String name) {
            return opts.containsKey(name);
        }

        /** The live set is built: wait until every mutator's is. */
        void ready() throws Exception {
            ready.await();
        }

        boolean running() {
            return !twin.stop;
        }

        /** An object's bytes in HotSpot's layout: a 12-byte header (compressed class
         *  pointers), the fields, rounded up to 8. */
        int objectBytes(int refs, int primitiveBytes) {
            return align(12 + refs * refBytes + primitiveBytes);
        }

        /** An array's bytes: a 16-byte header, the elements, rounded up to 8. */
        long arrayBytes(long elements, int elementBytes) {
            return align(16 + elements * elementBytes);
        }

        private static int align(long n) {
            return (int) ((n + 7) & ~7L);
        }
    }

    final Map<String, String> opts = new HashMap<>();
    int threads;
    long heapBytes;
    long liveSetBytes;
    long seed;
    long durationMs;
    int refBytes;
    volatile boolean stop;
    /** Where the hiccup meter's probe objects go, so the JIT cannot drop them. */
    static volatile Object probeSink;

    static final class Probe {
        long value;

        Probe(long v) {
            value = v;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.out.println("twin error usage: Twin heap-churn|binary-trees --option value ...");
            System.exit(2);
        }
        Twin t = new Twin();
        for (int i = 1; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                System.out.println("twin error not an option: " + args[i]);
                System.exit(2);
            }
            t.opts.put(args[i].substring(2), args[i + 1]);
        }
        Workload w;
        switch (args[0]) {
            case "heap-churn":
                w = HeapChurn::run;
                break;
            case "binary-trees":
                w = BinaryTrees::run;
                break;
            default:
                System.out.println("twin error no Java twin of " + args[0]);
                System.exit(2);
                return;
        }
        try {
            t.threads = Integer.parseInt(t.opts.getOrDefault("threads", "1"));
            t.heapBytes = Long.parseLong(t.opts.get("heap-bytes"));
            t.liveSetBytes = Long.parseLong(t.opts.get("live-set-bytes"));
            t.seed = Long.parseUnsignedLong(t.opts.getOrDefault("seed", "42"));
            t.durationMs = Long.parseLong(t.opts.get("duration-ms"));
            t.refBytes = Integer.parseInt(t.opts.getOrDefault("ref-bytes", "4"));
        } catch (RuntimeException e) {
            System.out.println("twin error bad options: " + e);
            System.exit(2);
        }
        System.exit(t.run(w));
    }

    int run(Workload w) throws Exception {
        CyclicBarrier ready = new CyclicBarrier(threads + 1);
        long[] ops = new long[threads];
        String[] errors = new String[threads];
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int idx = i;
            Ctx ctx = new Ctx(this, idx, ready);
            Thread th = new Thread(() -> {
                try {
                    ops[idx] = w.run(ctx);
                } catch (Throwable e) {
                    errors[idx] = e.toString();
                    stop = true;
                    ready.reset();
                }
            }, "mutator-" + i);
            workers.add(th);
            th.start();
        }
        try {
            ready.await();
        } catch (Exception e) {
            // A mutator failed while building its live set: reported below.
        }
        long start = System.nanoTime();
        System.out.println("twin ready " + start);
        System.out.flush();
        HiccupMeter meter = new HiccupMeter();
        Thread meterThread = new Thread(meter, "hiccup-meter");
        meterThread.start();
        long deadline = start + durationMs * 1_000_000L;
        while (!stop) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            LockSupport.parkNanos(Math.min(left, 20_000_000L));
        }
        stop = true;
        for (Thread th : workers) {
            th.join();
        }
        long end = System.nanoTime();
        meter.stop = true;
        meterThread.join();
        for (String e : errors) {
            if (e != null) {
                System.out.println("twin error " + e.replace('\n', ' '));
                return 1;
            }
        }
        long total = 0;
        for (long o : ops) {
            total += o;
        }
        StringBuilder sb = new StringBuilder("twin hiccup_overshoot_ns ");
        for (int i = 0; i < meter.count; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(meter.overshoot[i]);
        }
        System.out.println("twin start_ns " + start);
        System.out.println("twin end_ns " + end);
        System.out.println("twin operations " + total);
        System.out.println(sb);
        System.out.println("twin done");
        System.out.flush();
        return 0;
    }

    /** The 1 ms hiccup meter (jHiccup's method, as the Rust harness's): sleep 1 ms, wake up
     *  (which waits for a safepoint in progress), allocate a small object (which waits in an
     *  allocation stall), record by how much the round overshot 1 ms. */
    static final class HiccupMeter implements Runnable {
        volatile boolean stop;
        long[] overshoot = new long[1 << 16];
        int count;

        @Override
        public void run() {
            long round = 0;
            while (!stop) {
                long t0 = System.nanoTime();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
                probeSink = new Probe(round++);
                long over = System.nanoTime() - t0 - 1_000_000L;
                if (count == overshoot.length) {
                    overshoot = java.util.Arrays.copyOf(overshoot, count * 2);
                }
                overshoot[count++] = Math.max(0, over);
            }
        }
    }

    /** Per-thread random numbers as the Rust workloads' SmallRng: xoshiro256++ seeded by
     *  SplitMix64 from a 64-bit seed. Ranges are mapped by a widening multiply, so the picks
     *  follow the same distribution as rand's (not the same sequence). */
    static final class Rng {
        private long s0, s1, s2, s3;

        Rng(long seed) {
            long z = seed;
            long[] s = new long[4];
            for (int i = 0; i < 4; i++) {
                z += 0x9E3779B97F4A7C15L;
                long x = z;
                x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
                x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
                s[i] = x ^ (x >>> 31);
            }
            s0 = s[0];
            s1 = s[1];
            s2 = s[2];
            s3 = s[3];
        }

        long nextLong() {
            long result = Long.rotateLeft(s0 + s3, 23) + s0;
            long t = s1 << 17;
            s2 ^= s0;
            s3 ^= s1;
            s1 ^= s2;
            s0 ^= s3;
            s2 ^= t;
            s3 = Long.rotateLeft(s3, 45);
            return result;
        }

        /** Uniform in [0, n) for n > 0. */
        long below(long n) {
            long x = nextLong();
            // The high 64 bits of the unsigned 128-bit product x * n.
            return Math.multiplyHigh(x, n) + ((x >> 63) & n);
        }

        /** Uniform in [0, 1). */
        double nextDouble() {
            return (nextLong() >>> 11) * 0x1.0p-53;
        }
    }
}
