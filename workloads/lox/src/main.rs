//! The `lox` binary: runs a Lox script — or, without one, a REPL — on the collector.
//!
//! `--compile-only` compiles a script and reports compile errors (exit 65) or success (exit
//! 0); `--disassemble` prints its bytecode (and then runs it unless `--compile-only`).

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use lox::cli::{
    gc_summary, Options, EXIT_COMPILE_ERROR, EXIT_IO_ERROR, EXIT_OK, EXIT_RUNTIME_ERROR, EXIT_USAGE,
};
use lox::{InterpretError, Lox};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let options = match Options::try_parse() {
        Ok(options) => options,
        Err(error) => {
            let _ = error.print();
            if matches!(
                error.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) {
                return ExitCode::from(EXIT_OK);
            }
            // Some clap errors (invalid values) do not show the usage line; always show it.
            if !error.to_string().contains("Usage:") {
                eprintln!("\n{}", Options::command().render_usage());
            }
            return ExitCode::from(EXIT_USAGE);
        }
    };
    ExitCode::from(run(&options))
}

fn run(options: &Options) -> u8 {
    if let Err(e) = options.check_heap() {
        eprintln!("lox: {e}");
        eprintln!("Usage: lox [OPTIONS] [SCRIPT]");
        return EXIT_USAGE;
    }
    let Some(path) = &options.script else {
        if options.compile_only || options.disassemble {
            eprintln!("lox: --compile-only and --disassemble need a script");
            eprintln!("Usage: lox [OPTIONS] [SCRIPT]");
            return EXIT_USAGE;
        }
        let Some(mut lox) = start(options) else {
            return EXIT_USAGE;
        };
        let status = lox::repl::run(&mut lox);
        finish(options, &lox);
        return status;
    };

    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(_) => {
            eprintln!("Could not open file \"{}\".", path.display());
            return EXIT_IO_ERROR;
        }
    };
    let source = String::from_utf8_lossy(&bytes);

    let script = match lox::compile(&source) {
        Ok(script) => script,
        Err(errors) => {
            eprint!("{errors}");
            return EXIT_COMPILE_ERROR;
        }
    };
    if options.disassemble {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(lox::disassemble_function(&script).as_bytes());
        let _ = stdout.flush();
    }
    if options.compile_only {
        return EXIT_OK;
    }
    let Some(mut lox) = start(options) else {
        return EXIT_USAGE;
    };
    let status = match lox.run_script(&script) {
        Ok(()) => EXIT_OK,
        Err(InterpretError::Runtime) => EXIT_RUNTIME_ERROR,
        Err(InterpretError::Compile(errors)) => {
            eprint!("{errors}");
            EXIT_COMPILE_ERROR
        }
    };
    finish(options, &lox);
    status
}

/// Creates the interpreter, or reports why it cannot be.
fn start(options: &Options) -> Option<Lox> {
    let config = match options.heap_config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("lox: {e}");
            return None;
        }
    };
    match Lox::new(config) {
        Ok(lox) => Some(lox),
        Err(e) => {
            eprintln!("lox: {e}");
            None
        }
    }
}

fn finish(options: &Options, lox: &Lox) {
    if options.gc_stats {
        let heap = lox.heap();
        let usage = heap.usage();
        let pages = heap.page_size_reading();
        eprintln!(
            "{} (--gc {}, --heap {}m); peak committed heap {:.1} MiB, process Pss {:.1} MiB; \
             pages {} (--huge-pages {})",
            gc_summary(&heap.stats()),
            heap.config().mode,
            options.heap_size() >> 20,
            usage.peak_committed as f64 / (1 << 20) as f64,
            heap.memory_report().pss as f64 / (1 << 20) as f64,
            pages.label(),
            pages.requested,
        );
    }
}
