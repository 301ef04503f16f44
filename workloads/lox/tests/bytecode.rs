//! Structural checks of the compiler's output on every corpus program that compiles: each
//! function's bytecode decodes cleanly, operands point at existing constants of the right
//! kind, jumps land on instruction boundaries, `CLOSURE` operands agree with the nested
//! prototype's upvalues, and every chunk ends with `RETURN`. This is what the VM (and the
//! loader) may rely on without checking at run time.

use lox::instruction::Operands;
use lox::{compile, disassemble_function, Chunk, Constant, FunctionProto, OpCode};
use std::path::{Path, PathBuf};

fn corpus_sources() -> Vec<(String, String)> {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("corpus directory") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|e| e == "lox") {
                out.push(path);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(&root).unwrap().display().to_string();
            (
                name,
                std::fs::read_to_string(&p).expect("reading a corpus file"),
            )
        })
        .collect()
}

/// Checks one function and, recursively, every function nested in it.
fn check_function(function: &FunctionProto, max_line: u32, problems: &mut Vec<String>) {
    let name = function.display_name().to_string();
    let mut report = |message: String| problems.push(format!("{name}: {message}"));
    let chunk: &Chunk = &function.chunk;
    if chunk.lines.len() != chunk.code.len() {
        report("line table and code differ in length".into());
        return;
    }
    if let Some(line) = chunk.lines.iter().find(|&&l| l == 0 || l > max_line) {
        report(format!("line {line} outside the source"));
    }

    // Pass 1: decode, recording instruction starts and jump targets.
    let mut starts = vec![false; chunk.code.len() + 1];
    let mut targets = Vec::new();
    let mut last_op = None;
    let mut offset = 0;
    while offset < chunk.code.len() {
        starts[offset] = true;
        let ins = match function.decode(offset) {
            Ok(ins) => ins,
            Err(e) => {
                report(format!("{e:?} at {offset}"));
                return;
            }
        };
        let op = ins.op;
        last_op = Some(op);
        let name_constant = |i: u8| {
            matches!(
                function.constants.get(i as usize),
                Some(Constant::String(_))
            )
        };
        match ins.operands {
            Operands::Constant(i) if matches!(op, OpCode::Constant | OpCode::EqualConstant) => {
                if !matches!(
                    function.constants.get(i as usize),
                    Some(Constant::Number(_) | Constant::String(_))
                ) {
                    report(format!(
                        "{} at {offset} needs a number or string",
                        op.name()
                    ));
                }
            }
            Operands::Constant(i)
            | Operands::Invoke { name: i, .. }
            | Operands::LocalProperty { name: i, .. } => {
                if !name_constant(i) {
                    report(format!("{} at {offset} needs a name constant", op.name()));
                }
            }
            Operands::SuperInvokeUpvalue {
                name: i, upvalue, ..
            } => {
                if upvalue as usize >= function.upvalue_count() {
                    report(format!("{} at {offset}: no such upvalue", op.name()));
                }
                if !name_constant(i) {
                    report(format!("{} at {offset} needs a name constant", op.name()));
                }
            }
            Operands::Byte(i) if matches!(op, OpCode::GetUpvalue | OpCode::SetUpvalue) => {
                if i as usize >= function.upvalue_count() {
                    report(format!("{} at {offset}: no such upvalue", op.name()));
                }
            }
            Operands::Jump(_) => targets.push((offset, ins.jump_target().expect("a jump"))),
            Operands::Closure(i) => {
                let Some(Constant::Function(nested)) = function.constants.get(i as usize) else {
                    unreachable!("decode checks that CLOSURE names a function");
                };
                for ((_, is_local, index), capture) in ins.captures(chunk).zip(&nested.upvalues) {
                    if is_local != u8::from(capture.is_local) || index != capture.index {
                        report(format!("CLOSURE at {offset}: an upvalue disagrees"));
                    }
                    if !capture.is_local && capture.index as usize >= function.upvalue_count() {
                        report(format!("CLOSURE at {offset}: captures a missing upvalue"));
                    }
                }
            }
            Operands::Byte(_) | Operands::None => {}
        }
        let length = ins.len;
        offset += length;
    }
    starts[chunk.code.len()] = true;
    if last_op != Some(OpCode::Return) {
        report("does not end with RETURN".into());
    }
    // Pass 2: jump targets.
    for (at, target) in targets {
        if target < 0 || target as usize > chunk.code.len() || !starts[target as usize] {
            report(format!(
                "jump at {at} lands at {target}, not an instruction"
            ));
        }
    }
    for constant in &function.constants {
        if let Constant::Function(nested) = constant {
            if nested.name.is_none() {
                problems.push(format!("{name}: a nested function without a name"));
            }
            check_function(nested, max_line, problems);
        }
    }
}

#[test]
fn corpus_bytecode_is_well_formed() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, source) in corpus_sources() {
        let Ok(script) = compile(&source) else {
            continue;
        };
        checked += 1;
        let max_line = source.lines().count() as u32 + 1;
        let mut problems = Vec::new();
        if script.name.is_some() || script.arity != 0 || script.upvalue_count() != 0 {
            problems.push("the script must be unnamed, with no parameters or upvalues".into());
        }
        check_function(&script, max_line, &mut problems);
        let listing = disassemble_function(&script);
        if listing.contains("Unknown opcode") || listing.contains('?') && !source.contains('?') {
            problems.push("the disassembly shows malformed code".into());
        }
        if !problems.is_empty() {
            failures.push(format!("{name}:\n    {}", problems.join("\n    ")));
        }
    }
    assert!(checked >= 100, "only {checked} corpus programs compile");
    assert!(
        failures.is_empty(),
        "malformed bytecode:\n{}",
        failures.join("\n")
    );
}
