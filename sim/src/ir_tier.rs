//! The `ir` tier: the NF's source through the HLS front end and lowering, run by the untimed
//! IR interpreter. Wrapped as a [`NetworkFunction`], so the CPU target's runner, devices,
//! ingress checks and verdict resolution — the same code as the `cpu` tier — drive it.

use emu_core::{Action, Config, DropReason, Meta, NetworkFunction, NfDescriptor, Packet};
use emu_hls::initial::Initial;
use emu_hls::interp::{self, State};
use emu_hls::ir::Function;

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
    /// The IR tier of `desc` under `config`: compiled, its state as the NF's constructor
    /// leaves it on the CPU.
    pub fn build(desc: &NfDescriptor, config: &Config) -> Result<IrNf, String> {
        let source = desc.hls_source.ok_or_else(|| {
            format!("{} has no HLS source (it is not an #[emu::nf] module), so it has no ir tier", desc.name)
        })?;
        let func = compile(source, desc.window)?;
        let mut state = State::new(&func);
        let images = desc.initial_state(config).map_err(|e| e.to_string())?;
        let initial = Initial::from_cpu(&func, &images).map_err(|e| format!("{}: {e}", desc.name))?;
        initial.load_into(&func, &mut state).map_err(|e| format!("{}: {e}", desc.name))?;
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
