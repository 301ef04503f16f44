//! Byte- and token-level mutation of corpus programs (what libFuzzer's mutators do to its
//! corpus): a case takes one program of the [corpus](super::corpus) and applies one edit
//! (half the cases) or two to eight — flip a bit, overwrite or insert a byte (invalid UTF-8 included), insert a Lox token
//! or an interesting number, delete, duplicate or swap a range, splice in a range of another
//! program, truncate. Most results no longer compile, some still run: both are what a scanner,
//! compiler and VM must survive.

use super::corpus::Script;
use super::rng::Rng;

/// Tokens and fragments worth inserting: every keyword and operator, the names the compiler
/// treats specially, numbers at the edges, string and comment delimiters, non-ASCII text.
const DICTIONARY: &[&str] = &[
    "and",
    "class",
    "else",
    "false",
    "for",
    "fun",
    "if",
    "nil",
    "or",
    "print",
    "return",
    "super",
    "this",
    "true",
    "var",
    "while",
    "init",
    "clock",
    "(",
    ")",
    "{",
    "}",
    ",",
    ".",
    "-",
    "+",
    ";",
    "/",
    "*",
    "!",
    "!=",
    "=",
    "==",
    ">",
    ">=",
    "<",
    "<=",
    "\"",
    "//",
    "\n",
    " ",
    "this.x",
    "super.init(",
    "x = x",
    "fun f(a,b,c){return a;}",
    "class A < A {}",
    "class B < A {}",
    "return;",
    "var a = a;",
    "f()",
    "a.b.c",
    "0",
    "-0",
    "1.5",
    "255",
    "256",
    "65535",
    "4294967296",
    "9007199254740993",
    "1e308",
    "179769313486231570000000000000000000000000",
    ".5",
    "5.",
    "0.0000001",
    "\"\u{e9}t\u{e9}\"",
    "\u{1F600}",
    "\u{0}",
    "\t",
    "\r",
];

/// The longest mutated program.
const MAX_LEN: usize = 64 << 10;

/// A mutation of one corpus program; returns it and the name of the program it came from.
pub fn mutate<'c>(rng: &mut Rng, corpus: &'c [Script]) -> (Vec<u8>, &'c str) {
    let base = &corpus[rng.index(corpus.len())];
    let mut bytes = base.bytes.clone();
    // Half the cases make one edit, so that many still compile and run.
    let edits = if rng.chance(500) { 1 } else { rng.range(2, 8) };
    for _ in 0..edits {
        edit(rng, corpus, &mut bytes);
    }
    bytes.truncate(MAX_LEN);
    (bytes, &base.name)
}

/// A random range of `bytes`: (start, length), length at most `max`.
fn span(rng: &mut Rng, len: usize, max: usize) -> (usize, usize) {
    let start = rng.index(len + 1);
    let n = rng.index((len - start).min(max) + 1);
    (start, n)
}

fn edit(rng: &mut Rng, corpus: &[Script], bytes: &mut Vec<u8>) {
    let len = bytes.len();
    match rng.below(10) {
        0 if len > 0 => {
            let i = rng.index(len);
            bytes[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.index(len);
            bytes[i] = *rng.pick(b"(){};.,=+-*/!<>\"0123456789aZ_ \n\xff\xc3\x80");
        }
        2 => {
            let i = rng.index(len + 1);
            bytes.insert(i, rng.below(256) as u8);
        }
        3 | 4 => {
            let i = rng.index(len + 1);
            let token = rng.pick(DICTIONARY).as_bytes();
            bytes.splice(i..i, token.iter().copied());
        }
        5 => {
            let (start, n) = span(rng, len, 64);
            bytes.drain(start..start + n);
        }
        6 => {
            let (start, n) = span(rng, len, 256);
            let copy: Vec<u8> = bytes[start..start + n].to_vec();
            let at = rng.index(len + 1);
            bytes.splice(at..at, copy);
        }
        7 => {
            let other = &corpus[rng.index(corpus.len())].bytes;
            let (start, n) = span(rng, other.len(), 512);
            let at = rng.index(len + 1);
            bytes.splice(at..at, other[start..start + n].iter().copied());
        }
        8 if len > 1 => {
            let (a, n) = span(rng, len / 2, 32);
            let (b, m) = span(rng, len - len / 2, 32);
            let b = b + len / 2;
            let first: Vec<u8> = bytes[a..a + n].to_vec();
            let second: Vec<u8> = bytes[b..b + m].to_vec();
            bytes.splice(b..b + m, first);
            bytes.splice(a..a + n, second);
        }
        _ => {
            let at = rng.index(len + 1);
            bytes.truncate(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_seeded_and_bounded() {
        let corpus = vec![
            Script {
                name: "a".into(),
                bytes: b"print 1 + 2;\nvar x = \"s\";\n".to_vec(),
            },
            Script {
                name: "b".into(),
                bytes: Vec::new(),
            },
        ];
        let mut changed = 0;
        for seed in 0..2000 {
            let (a, name) = mutate(&mut Rng::new(seed), &corpus);
            let (b, _) = mutate(&mut Rng::new(seed), &corpus);
            assert_eq!(a, b);
            assert!(a.len() <= MAX_LEN);
            changed += usize::from(a != corpus[usize::from(name == "b")].bytes);
        }
        assert!(changed > 1500, "{changed}");
    }
}
