fn main() {
    std::process::exit(emu_tool::main_with(&[]));
}
