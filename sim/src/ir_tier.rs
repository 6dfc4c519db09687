//! The `ir` tier: the NF's source through the HLS front end and lowering, run by the untimed
//! IR interpreter. Wrapped as a [`NetworkFunction`], so the CPU target's runner, devices,
//! ingress checks and verdict resolution — the same code as the `cpu` tier — drive it.

use emu_core::{Action, Config, DropReason, Meta, NetworkFunction, NfDescriptor, Packet, TableEntry};
use emu_hls::interp::{self, State};
use emu_hls::ir::{BitVec, Function, StateKind};

/// An NF as its lowered, optimized IR plus the interpreter's state.
pub struct IrNf {
    func: Function,
    state: State,
    /// Frames the interpreter could not run (a compiler bug: the tier then disagrees with cpu).
    pub errors: u64,
    /// The first such error.
    pub first_error: Option<String>,
}

pub use emu_hls::compile;

impl IrNf {
    /// The IR tier of `desc` under `config`: compiled, with its configuration registers and
    /// its tables' initial entries loaded.
    pub fn build(desc: &NfDescriptor, config: &Config) -> Result<IrNf, String> {
        let source = desc.hls_source.ok_or_else(|| {
            format!("{} has no HLS source (it is not an #[emu::nf] module), so it has no ir tier", desc.name)
        })?;
        let func = compile(source, desc.window)?;
        let mut state = State::new(&func);
        for (name, value) in (desc.registers)(config).map_err(|e| e.to_string())? {
            let width = func
                .states
                .iter()
                .find_map(|(_, d)| match &d.kind {
                    StateKind::Register { ty } if d.name == name => Some(ty.width()),
                    _ => None,
                })
                .ok_or_else(|| format!("{}: the IR has no register `{name}`", desc.name))?;
            state.set_register(name, BitVec::new(width, value))?;
        }
        for entry in (desc.tables)(config).map_err(|e| e.to_string())? {
            match entry {
                TableEntry::Tcam { table, slot, value, mask, result } => state
                    .set_tcam(
                        table,
                        slot,
                        BitVec::from_be_bytes(&value),
                        BitVec::from_be_bytes(&mask),
                        BitVec::from_be_bytes(&result),
                    )
                    .map_err(|e| format!("{}: {e}", desc.name))?,
                TableEntry::Cam { table, slot, key, value } => state
                    .load_cam(table, slot, BitVec::from_be_bytes(&key), BitVec::from_be_bytes(&value))
                    .map_err(|e| format!("{}: {e}", desc.name))?,
            }
        }
        Ok(IrNf { func, state, errors: 0, first_error: None })
    }

    /// The IR tier of a compiled function, its state fresh (no registers or tables loaded).
    pub fn new(func: Function) -> IrNf {
        let state = State::new(&func);
        IrNf { func, state, errors: 0, first_error: None }
    }

    /// The IR, as text.
    pub fn ir_text(&self) -> String {
        self.func.to_string()
    }

    /// The interpreter's state elements, by field name (to compare with the CPU's after a run).
    pub fn state(&self) -> &State {
        &self.state
    }
}

impl NetworkFunction for IrNf {
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> Action {
        match interp::run(&self.func, &mut self.state, pkt, meta) {
            Ok(action) => action,
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
                Action::Drop(DropReason::Malformed)
            }
        }
    }
}
