//! Objects of one heap handed to another: one thread holds scopes of two heaps at once, and
//! every entry point that takes an object, a handle or a region must refuse one of the other
//! heap (a foreign pointer would pass the barrier's fast path, never be relocated or healed
//! by its own heap, and could be used after its page is freed). Each refusal is a panic with
//! a message that names the mistake; afterwards both heaps still collect and keep their
//! objects.

use gc_runtime::{Heap, HeapConfig, Mode, Scope};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn heap() -> Heap {
    Heap::new(
        HeapConfig::new(16 << 20)
            .mode(Mode::Concurrent)
            .verify(true),
    )
    .unwrap()
}

/// Run `f`, which must panic with a message about another heap.
fn refused(what: &str, f: impl FnOnce()) {
    let r = catch_unwind(AssertUnwindSafe(f));
    let err = r
        .err()
        .unwrap_or_else(|| panic!("{what}: an object of another heap was accepted"));
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.contains("another heap"),
        "{what}: refused with an unclear message: {msg:?}"
    );
}

/// Both heaps still collect, and the objects written before are intact.
fn still_sound(sa: &mut Scope<'_>, sb: &mut Scope<'_>, a: u64, b: u64) {
    let (la, lb) = (sa.alloc(1, 0, 8).unwrap(), sb.alloc(1, 0, 8).unwrap());
    sa.get(la).write_u64(0, a);
    sb.get(lb).write_u64(0, b);
    sa.collect("test");
    sb.collect("test");
    assert_eq!(sa.get(la).read_u64(0), a);
    assert_eq!(sb.get(lb).read_u64(0), b);
}

#[test]
fn every_entry_point_refuses_objects_of_another_heap() {
    let (ha, hb) = (heap(), heap());
    let (mut ma, mut mb) = (ha.attach("a").unwrap(), hb.attach("b").unwrap());
    let region_b = hb.root_region(4);
    ma.scope(|sa| {
        mb.scope(|sb| {
            let la = sa.alloc(1, 2, 8).unwrap();
            let lb = sb.alloc(1, 2, 8).unwrap();
            sa.get(la).write_u64(0, 0xa);
            sb.get(lb).write_u64(0, 0xb);

            refused("Scope::get", || {
                sb.get(la);
            });
            refused("Scope::load", || {
                sb.load(la, 0);
            });
            refused("Scope::store (object)", || sb.store(la, 0, Some(lb)));
            refused("Scope::store (value)", || sb.store(lb, 0, Some(la)));
            refused("Scope::same_object", || {
                sb.same_object(la, lb);
            });
            refused("Scope::global", || {
                sb.global(la);
            });
            refused("Scope::weak", || {
                sb.weak(la);
            });
            refused("Scope::root", || {
                sb.root(sa.get(la));
            });
            refused("ObjRef::store", || {
                sb.get(lb).store(0, Some(sa.get(la)));
            });
            refused("RootRegion::set", || {
                region_b.set(sb, 0, Some(sa.get(la)));
            });
            refused("RootRegion::set_local", || {
                region_b.set_local(sb, 0, Some(la));
            });
            refused("RootRegion::get with a scope of another heap", || {
                region_b.get(sa, 0);
            });
            refused("RootRegion::view with a scope of another heap", || {
                region_b.view::<4>(sa);
            });
            refused("RegionView::set", || {
                region_b.view::<4>(sb).set(0, Some(sa.get(la)));
            });
            let ga = sa.global(la);
            refused("Scope::from_global", || {
                sb.from_global(&ga);
            });
            refused("Global::get", || {
                ga.get(sb);
            });
            let wa = sa.weak(la);
            refused("Scope::upgrade", || {
                sb.upgrade(&wa);
            });
            refused("WeakRef::get", || {
                wa.get(sb);
            });
            refused("Scope::weak_ref", || {
                sb.weak_ref(sa.get(la));
            });
            refused("Fresh::init", || {
                let f = sb.alloc_fresh(1, 2, 8).expect("b's private page has room");
                f.init(0, Some(sa.get(la)));
            });

            // Nothing foreign got in: the slots and the region still hold what they held.
            assert!(sb.get(lb).load(0).is_none());
            assert!(region_b.is_null(0));
            still_sound(sa, sb, 0xaa, 0xbb);
            assert_eq!(sa.get(la).read_u64(0), 0xa);
            assert_eq!(sb.get(lb).read_u64(0), 0xb);
        })
    });
}

#[test]
fn objects_of_the_same_heap_are_accepted_from_outer_scopes() {
    let h = heap();
    let mut m = h.attach("main").unwrap();
    let region = h.root_region(2);
    m.scope(|s| {
        let outer = s.alloc(1, 1, 8).unwrap();
        s.get(outer).write_u64(0, 7);
        s.scope(|s| {
            let inner = s.alloc(1, 1, 0).unwrap();
            s.store(inner, 0, Some(outer));
            s.get(outer).store(0, Some(s.get(inner)));
            region.set_local(s, 0, Some(outer));
            let r = s.root(s.get(outer));
            assert!(s.same_object(r, outer));
        });
        s.collect("test");
        let o = region.get(s, 0).expect("rooted by the region");
        assert_eq!(o.read_u64(0), 7);
        // A view of the region roots what it stores, as the region's own calls do.
        {
            let v = region.view::<2>(s);
            v.set(1, Some(s.get(outer)));
            assert!(v.get(1).is_some_and(|o| o.same(&s.get(outer))));
        }
        s.collect("test");
        let v = region.view::<2>(s);
        assert_eq!(v.get(1).expect("rooted by the view's store").read_u64(0), 7);
        v.set(1, None);
        assert!(v.is_null(1));
        // A view must have the region's size.
        assert!(catch_unwind(AssertUnwindSafe(|| {
            region.view::<3>(s);
        }))
        .is_err());
    });
}
