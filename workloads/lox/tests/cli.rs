//! The `lox` binary's command line: exit statuses, messages, `--compile-only` and
//! `--disassemble`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn lox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lox"))
        .args(args)
        .output()
        .expect("running lox")
}

/// Writes `source` to a fresh file in the target directory and returns its path.
fn script(name: &str, source: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lox-cli");
    std::fs::create_dir_all(&dir).expect("creating the scratch directory");
    let path = dir.join(name);
    std::fs::write(&path, source).expect("writing the script");
    path
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn bad_usage_exits_64_with_a_usage_message() {
    for args in [
        &["a.lox", "b.lox"][..],
        &["--gc", "bogus", "a.lox"],
        &["--heap", "lots", "a.lox"],
        &["--no-such-flag"],
        &["--compile-only"],
        &["--disassemble"],
    ] {
        let output = lox(args);
        assert_eq!(output.status.code(), Some(64), "lox {args:?}");
        assert!(
            stderr(&output).contains("Usage: lox"),
            "lox {args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn help_exits_0() {
    let output = lox(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = stdout(&output);
    for flag in [
        "--heap",
        "--gc",
        "--gc-log",
        "--gc-stats",
        "--compile-only",
        "--disassemble",
    ] {
        assert!(
            help.contains(flag),
            "--help does not mention {flag}:\n{help}"
        );
    }
}

#[test]
fn unreadable_script_exits_74() {
    let missing = "/nonexistent/dir/missing.lox";
    for args in [&["--compile-only", missing][..], &[missing]] {
        let output = lox(args);
        assert_eq!(output.status.code(), Some(74), "lox {args:?}");
        assert_eq!(
            stderr(&output),
            format!("Could not open file \"{missing}\".\n")
        );
    }
}

#[test]
fn compile_errors_exit_65_on_stderr() {
    let path = script("errors.lox", "print 1 +;\nvar = 2;\nprint \"ok\";\n{\n");
    // The same with or without --compile-only: compilation comes first.
    for compile_only in [true, false] {
        let path = path.to_str().unwrap();
        let args: &[&str] = if compile_only {
            &["--compile-only", path]
        } else {
            &["--gc", "stw", path]
        };
        let output = lox(args);
        assert_eq!(output.status.code(), Some(65));
        assert_eq!(stdout(&output), "");
        assert_eq!(
            stderr(&output),
            "[line 1] Error at ';': Expect expression.\n\
             [line 2] Error at '=': Expect variable name.\n\
             [line 5] Error at end: Expect '}' after block.\n"
        );
    }
}

#[test]
fn compile_only_succeeds_silently() {
    let path = script("fine.lox", "fun f(x) { return x * 2; }\nprint f(21);\n");
    let output = lox(&["--compile-only", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "");
    assert_eq!(stderr(&output), "");
}

#[test]
fn disassemble_prints_every_function() {
    let path = script(
        "disassemble.lox",
        "fun twice(x) {\n  return x * 2;\n}\nprint twice(21);\n",
    );
    let output = lox(&["--compile-only", "--disassemble", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "\
== twice ==
0000    2 OP_GET_LOCAL        1
0002    | OP_CONSTANT         0 '2'
0004    | OP_MULTIPLY
0005    | OP_RETURN
0006    3 OP_NIL
0007    | OP_RETURN
== <script> ==
0000    3 OP_CLOSURE          1 <fn twice>
0002    | OP_DEFINE_GLOBAL    0 'twice'
0004    4 OP_GET_GLOBAL       2 'twice'
0006    | OP_CONSTANT         3 '21'
0008    | OP_CALL             1
0010    | OP_PRINT
0011    5 OP_NIL
0012    | OP_RETURN
"
    );
}
