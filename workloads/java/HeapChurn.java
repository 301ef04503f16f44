// The Java twin of heap-churn (workloads/src/workloads/heap_churn.rs): a long-lived graph of
// small complete binary trees (--subgraph-nodes nodes each; a node has left, right and payload
// references and a long id) held in a chunked root table (chunks of --root-chunk-slots slots),
// sized so the graph is this thread's share of the live-set target in HotSpot's object layout.
// One operation: replace the tree in a random slot with a freshly built one; --mutations times
// walk 0-3 levels down a random tree and store a fresh payload object (two longs) there;
// allocate a short-lived byte array of --garbage-bytes (uniformly 50-150%) into a ring of
// --garbage-ring entries. --ops-per-sec (0: unthrottled) spaces operations per thread.

import java.util.concurrent.locks.LockSupport;

final class HeapChurn {
    static final class Node {
        Node left;
        Node right;
        Object payload;
        long id;
    }

    static final class Payload {
        long a;
        long b;

        Payload(long a, long b) {
            this.a = a;
            this.b = b;
        }
    }

    private HeapChurn() {}

    /** A complete binary tree of `nodes` nodes, numbered from next[0] + 1; returns its root. */
    static Node buildTree(int nodes, long[] next) {
        Node[] level = new Node[nodes];
        for (int i = 0; i < nodes; i++) {
            Node n = new Node();
            n.id = ++next[0];
            level[i] = n;
        }
        for (int i = 1; i < nodes; i++) {
            Node parent = level[(i - 1) / 2];
            if (i % 2 == 1) {
                parent.left = level[i];
            } else {
                parent.right = level[i];
            }
        }
        return level[0];
    }

    static long run(Twin.Ctx ctx) throws Exception {
        int nodes = (int) Math.max(1, ctx.opt("subgraph-nodes"));
        long mutations = ctx.opt("mutations");
        long garbageBytes = ctx.opt("garbage-bytes");
        long opsPerSec = ctx.opt("ops-per-sec");
        long chunkSlots = Math.max(1, ctx.opt("root-chunk-slots"));
        int ringLen = (int) Math.max(1, ctx.opt("garbage-ring"));
        Twin.Rng rng = ctx.rng();
        // Each tree costs its nodes plus one table slot, as in the Rust workload.
        long treeBytes = (long) nodes * ctx.objectBytes(3, 8) + ctx.refBytes;
        long trees = Math.max(1, ctx.liveBytes() / treeBytes);
        int chunks = (int) ((trees + chunkSlots - 1) / chunkSlots);
        long[] next = {((long) ctx.thread) << 48};
        Node[][] table = new Node[chunks][];
        Object[] ring = new Object[ringLen];
        for (int c = 0; c < chunks; c++) {
            table[c] = new Node[(int) Math.min(chunkSlots, trees - c * chunkSlots)];
        }
        for (long t = 0; t < trees; t++) {
            table[(int) (t / chunkSlots)][(int) (t % chunkSlots)] = buildTree(nodes, next);
        }
        ctx.ready();
        long interval = opsPerSec > 0 ? 1_000_000_000L / opsPerSec : 0;
        long begin = System.nanoTime();
        long ops = 0;
        while (ctx.running()) {
            if (interval > 0) {
                long due = begin + ops * interval;
                long now;
                while ((now = System.nanoTime()) < due) {
                    LockSupport.parkNanos(due - now);
                }
            }
            // Replace a random tree.
            long t = rng.below(trees);
            table[(int) (t / chunkSlots)][(int) (t % chunkSlots)] = buildTree(nodes, next);
            // Store fresh payloads 0-3 levels down random trees.
            for (long m = 0; m < mutations; m++) {
                Payload p = new Payload(ops, 0);
                long u = rng.below(trees);
                long depth = rng.below(4);
                p.b = u;
                Node node = table[(int) (u / chunkSlots)][(int) (u % chunkSlots)];
                for (long d = 0; d < depth; d++) {
                    Node child = rng.below(2) == 0 ? node.left : node.right;
                    if (child == null) {
                        break;
                    }
                    node = child;
                }
                node.payload = p;
            }
            // Short-lived garbage.
            int size = (int) (garbageBytes * (0.5 + rng.nextDouble()));
            ring[(int) (ops % ringLen)] = new byte[size];
            ops++;
        }
        return ops;
    }
}
