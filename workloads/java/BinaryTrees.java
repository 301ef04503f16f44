// The Java twin of binary-trees (workloads/src/workloads/binary_trees.rs): the Computer
// Language Benchmarks Game program. A node has two references and no payload; trees are built
// bottom-up and checked by counting their nodes. Thread 0 builds and checks a stretch tree of
// depth max + 1 and keeps a long-lived tree of depth max (the set-up); the measured phase
// repeats, until the duration ends, for every depth d from min to max in steps of 2, this
// thread's share of the 2^(max - d + min) trees of depth d (one operation: one tree built and
// checked), verifying every sum. --depth sets max; without it, max is the deepest depth whose
// long-lived tree fits the live-set target and whose peak live data fits 5/8 of the heap, in
// HotSpot's object layout, as the Rust workload chooses it in its own.

final class BinaryTrees {
    static final class Node {
        Node left;
        Node right;

        Node(Node left, Node right) {
            this.left = left;
            this.right = right;
        }
    }

    static final int MAX_DEPTH = 30;

    private BinaryTrees() {}

    static Node bottomUp(int depth) {
        if (depth == 0) {
            return new Node(null, null);
        }
        Node left = bottomUp(depth - 1);
        Node right = bottomUp(depth - 1);
        return new Node(left, right);
    }

    static long check(Node n) {
        return 1 + (n.left == null ? 0 : check(n.left)) + (n.right == null ? 0 : check(n.right));
    }

    static long treeNodes(int depth) {
        return (1L << (depth + 1)) - 1;
    }

    static int defaultDepth(Twin.Ctx ctx, int minDepth) {
        long nodeBytes = ctx.objectBytes(2, 0);
        long peakTrees = Math.max(1, ctx.threads) + 1L;
        long room = ctx.heapBytes / 8 * 5;
        int d = Math.min(minDepth + 2, MAX_DEPTH);
        while (d < MAX_DEPTH
                && treeNodes(d + 1) * nodeBytes <= ctx.liveSetBytes
                && treeNodes(d + 1) * nodeBytes * peakTrees <= room) {
            d++;
        }
        return d;
    }

    static void verify(String what, int depth, long got, long want) {
        if (got != want) {
            throw new IllegalStateException("binary-trees: " + what + " of depth " + depth
                    + " checks " + got + ", expected " + want);
        }
    }

    static long run(Twin.Ctx ctx) throws Exception {
        int minDepth = (int) ctx.opt("min-depth");
        int maxDepth = ctx.has("depth")
                ? Math.max((int) ctx.opt("depth"), minDepth + 2)
                : defaultDepth(ctx, minDepth);
        if (maxDepth > MAX_DEPTH || minDepth + 2 > maxDepth) {
            throw new IllegalArgumentException("binary-trees: depths min " + minDepth + ", max "
                    + maxDepth + ": need min + 2 <= max <= " + MAX_DEPTH);
        }
        Node longLived = null;
        if (ctx.thread == 0) {
            int stretch = maxDepth + 1;
            verify("stretch tree", stretch, check(bottomUp(stretch)), treeNodes(stretch));
            longLived = bottomUp(maxDepth);
        }
        ctx.ready();
        long threads = Math.max(1, ctx.threads);
        long ops = 0;
        passes:
        while (ctx.running()) {
            for (int d = minDepth; d <= maxDepth; d += 2) {
                long all = 1L << (maxDepth - d + minDepth);
                long mine = all / threads + (ctx.thread < all % threads ? 1 : 0);
                long sum = 0;
                for (long i = 0; i < mine; i++) {
                    if (!ctx.running()) {
                        break passes;
                    }
                    sum += check(bottomUp(d));
                    ops++;
                }
                verify("the sum of " + mine + " trees", d, sum, mine * treeNodes(d));
            }
        }
        if (longLived != null) {
            verify("long lived tree", maxDepth, check(longLived), treeNodes(maxDepth));
        }
        return ops;
    }
}
