//! The heap's epoch domain is not the default one: a thread pinning it (a mutator in a
//! barrier's slow path) never runs a free deferred on the default domain, where the mark
//! stacks (`crossbeam-deque`) defer their outgrown buffers. Its own process, so that no other
//! test pins the default domain meanwhile.

use gc_core::heap_epoch;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn pinning_the_heap_domain_never_runs_the_default_domains_frees() {
    let freed = Arc::new(AtomicUsize::new(0));
    {
        let f = freed.clone();
        let g = crossbeam_epoch::pin();
        g.defer(move || f.fetch_add(1, Ordering::SeqCst));
        g.flush();
    }
    // Many pins of the heap domain, on this thread and another, each flushed (a flush runs
    // the due frees of the domain it was pinned in).
    for _ in 0..10_000 {
        heap_epoch::pin().flush();
    }
    std::thread::spawn(|| {
        for _ in 0..10_000 {
            heap_epoch::pin().flush();
        }
    })
    .join()
    .unwrap();
    assert_eq!(
        freed.load(Ordering::SeqCst),
        0,
        "a pin of the heap's domain ran a free deferred on the default domain"
    );
    // The same loop on the default domain runs it: the check above could have failed.
    let mut pins = 0;
    while freed.load(Ordering::SeqCst) == 0 && pins < 10_000 {
        crossbeam_epoch::pin().flush();
        pins += 1;
    }
    assert_eq!(
        freed.load(Ordering::SeqCst),
        1,
        "the default domain's free never ran"
    );
}
