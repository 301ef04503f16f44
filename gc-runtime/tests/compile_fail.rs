//! Compile-fail tests (trybuild): the rooting rules the type system enforces.
#[test]
fn handles_cannot_escape() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
