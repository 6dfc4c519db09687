//! `emu list`

use crate::registry::Registry;

pub(crate) fn run(registry: &Registry) -> Result<i32, String> {
    println!("{:<18} {:>5} {:>6}  description", "name", "ports", "window");
    for d in registry.all() {
        println!("{:<18} {:>5} {:>6}  {}", d.name, d.ports, d.window, d.summary);
        for p in d.params {
            let default = p.default.map(|v| format!(" (default {v})")).unwrap_or_else(|| " (required)".into());
            println!("{:<32}--{} VALUE: {}{default}", "", p.name, p.help);
        }
    }
    Ok(0)
}
