fn main() {
    eprintln!("pause-sweep: not implemented yet");
    std::process::exit(2);
}
