//! The interpreter as a library: output capture, globals persisting between programs, and weak
//! string interning observed through the embedding API.

use gc_runtime::{HeapConfig, Mode};
use lox::{InterpretError, Lox};
mod support;

use support::Buffer;

fn lox(mode: Mode) -> (Lox, Buffer, Buffer) {
    let (out, err) = (Buffer::default(), Buffer::default());
    let config = HeapConfig::new(16 << 20).mode(mode).verify(true);
    let lox = Lox::with_output(config, Box::new(out.clone()), Box::new(err.clone())).unwrap();
    (lox, out, err)
}

#[test]
fn globals_persist_between_programs() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let (mut lox, out, err) = lox(mode);
        lox.interpret("var n = 40; fun add(x) { return n + x; }")
            .unwrap();
        lox.collect();
        lox.interpret("print add(2);").unwrap();
        lox.flush();
        assert_eq!(out.take(), "42\n");
        assert!(matches!(
            lox.interpret("print nope;"),
            Err(InterpretError::Runtime)
        ));
        assert_eq!(
            err.take(),
            "Undefined variable 'nope'.\n[line 1] in script\n"
        );
        assert!(matches!(
            lox.interpret("print (;"),
            Err(InterpretError::Compile(_))
        ));
        // The VM recovers from errors.
        lox.interpret("print add(-38);").unwrap();
        lox.flush();
        assert_eq!(out.take(), "2\n");
    }
}

#[test]
fn interned_strings_die_when_unreferenced() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let (mut lox, out, _) = lox(mode);
        lox.interpret(
            "var kept = \"kept \" + \"string\";\n\
             { var temporary = \"temporary \" + \"string\"; print temporary; }",
        )
        .unwrap();
        assert!(lox.is_interned("kept string"));
        assert!(lox.is_interned("temporary string"));
        lox.collect();
        assert!(
            lox.is_interned("kept string"),
            "{mode:?}: a global keeps it"
        );
        assert!(
            !lox.is_interned("temporary string"),
            "{mode:?}: nothing references it any more"
        );
        // Equal contents made again are equal to the survivors and to new strings.
        lox.interpret(
            "print kept == \"kept string\";\n\
             print \"temporary \" + \"string\" == \"temporary string\";",
        )
        .unwrap();
        lox.flush();
        assert_eq!(out.take(), "temporary string\ntrue\ntrue\n");
        let (entries, live) = lox.interned_strings();
        assert!(live <= entries);
    }
}

#[test]
fn objects_move_and_programs_do_not_notice() {
    let (mut lox, out, err) = lox(Mode::Concurrent);
    lox.interpret(
        "class Node { init(v, next) { this.v = v; this.next = next; } }\n\
         var list = nil;\n\
         for (var i = 0; i < 1000; i = i + 1) list = Node(i, list);\n\
         fun sum(l) { var t = 0; while (l != nil) { t = t + l.v; l = l.next; } return t; }\n\
         var counter = nil;\n\
         { var n = 0; fun inc() { n = n + 1; return n; } counter = inc; }",
    )
    .unwrap();
    for round in 0..5 {
        lox.collect();
        lox.interpret("print sum(list); print counter();").unwrap();
        lox.flush();
        assert_eq!(
            out.take(),
            format!("499500\n{}\n", round + 1),
            "{}",
            err.take()
        );
    }
    assert!(lox.heap().stats().cycles.len() >= 5);
}

/// `print` of a long string writes it a piece at a time and polls between pieces (issue 26,
/// item 8): a 64 MiB string polls at least once per 256 KiB written, in every mode, and the
/// output is the string whole. Not a timing test: it counts the polls of the one `print`.
#[test]
fn printing_a_64_mib_string_polls_between_pieces() {
    for mode in [Mode::Concurrent, Mode::Stw, Mode::Epsilon] {
        let out = Buffer::default();
        let config = HeapConfig::new(512 << 20).mode(mode);
        let mut lox =
            Lox::with_output(config, Box::new(out.clone()), Box::new(Buffer::default())).unwrap();
        // "ab" doubled 25 times: 64 MiB.
        lox.interpret("var s = \"ab\"; for (var i = 0; i < 25; i = i + 1) s = s + s;")
            .unwrap();
        let before = lox.polls();
        lox.interpret("print s;").unwrap();
        let polls = lox.polls() - before;
        let len = 64 << 20;
        assert!(
            polls >= (len / (256 << 10)) as u64,
            "{mode}: printing a 64 MiB string polled {polls} times"
        );
        lox.flush();
        let text = out.take();
        assert_eq!(text.len(), len + 1, "{mode}");
        assert!(text.ends_with("ab\n") && text.starts_with("abab"), "{mode}");
        assert!(
            text.as_bytes()[..len].chunks(2).all(|p| p == b"ab"),
            "{mode}: the printed string differs"
        );
        // A short string still prints in one go.
        lox.interpret("print \"ab\" + \"cd\";").unwrap();
        lox.flush();
        assert_eq!(out.take(), "abcd\n");
    }
}

/// Every loaded function's constants are kept in one array by code index, which doubles when
/// full: 300 functions (more than four times the first capacity of 64), loaded by separate
/// programs with a collection between them (objects move in the concurrent mode), each still
/// reads its own constants — a string, a name it looks up and a nested function — afterwards.
#[test]
fn constants_of_many_functions_outlive_growth_and_collection() {
    for mode in [Mode::Concurrent, Mode::Stw] {
        let (mut lox, out, err) = lox(mode);
        lox.interpret("class Box { init(v) { this.v = v; } }")
            .unwrap();
        for batch in 0..10 {
            let mut program = String::new();
            for i in batch * 30..batch * 30 + 30 {
                program.push_str(&format!(
                    "fun f{i}() {{ fun inner() {{ return \"s{i}\"; }} \
                     return Box(inner).v() + \" \" + Box(\"t{i}\").v; }}\n"
                ));
            }
            lox.interpret(&program).unwrap();
            lox.collect();
        }
        for batch in 0..10 {
            let calls: String = (batch * 30..batch * 30 + 30)
                .map(|i| format!("print f{i}();\n"))
                .collect();
            lox.interpret(&calls).unwrap();
            lox.collect();
        }
        lox.flush();
        let expected: String = (0..300).map(|i| format!("s{i} t{i}\n")).collect();
        assert_eq!(out.take(), expected, "{mode:?}");
        assert_eq!(err.take(), "", "{mode:?}");
    }
}
