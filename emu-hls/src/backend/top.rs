//! The design as one rust-hdl block with the NetFPGA SUME output-port-lookup ports:
//! `update()` is the cycle model ([`super::model`]), `hdl()` the generated Verilog
//! ([`super::rtl`]), so rust-hdl's `generate_verilog` gives the whole design.

use super::model::{Beat, CycleModel, Inputs, Outputs};
use super::{rtl, Design};
use crate::verilog::{self, Expr, Instance, Item};
use rust_hdl::prelude::*;

/// Something clocked with the SUME stream ports: the cycle model itself, or [`SumeTop`]
/// stepped through its rust-hdl signals. [`super::model::Driver`] drives either.
pub trait Clocked {
    /// The outputs in the current cycle.
    fn outputs(&self) -> Outputs;
    /// One rising edge with `inputs`.
    fn clock(&mut self, inputs: &Inputs);
    /// One cycle with reset held, after which the outputs are those of the reset state.
    fn reset(&mut self);
    /// Whether a waveform being written records the cycles from now on (a tracing model);
    /// nothing for hardware that writes none.
    fn set_recording(&mut self, _on: bool) {}
    /// The cycle-accurate model, when that is what this is (for its profile figures).
    fn model(&self) -> Option<&CycleModel> {
        None
    }
}

impl<T: Clocked + ?Sized> Clocked for Box<T> {
    fn outputs(&self) -> Outputs {
        (**self).outputs()
    }
    fn clock(&mut self, inputs: &Inputs) {
        (**self).clock(inputs)
    }
    fn reset(&mut self) {
        (**self).reset()
    }
    fn set_recording(&mut self, on: bool) {
        (**self).set_recording(on)
    }
    fn model(&self) -> Option<&CycleModel> {
        (**self).model()
    }
}

impl Clocked for CycleModel {
    fn outputs(&self) -> Outputs {
        CycleModel::outputs(self)
    }
    fn clock(&mut self, inputs: &Inputs) {
        CycleModel::clock(self, inputs)
    }
    fn reset(&mut self) {
        *self = CycleModel::new(&self.design);
    }
    fn model(&self) -> Option<&CycleModel> {
        Some(self)
    }
}

/// A rust-hdl block with the NetFPGA SUME output-port-lookup ports: the one declaration of the
/// port bundle, for the generated designs' [`SumeTop`] and the hand-written references
/// (`emu_fpga::reference`). The struct's first two const parameters must be `D` (data bits)
/// and `K` (keep bits, `D / 8`); the body's fields follow the ports. Build a value with
/// [`sume_new!`](crate::sume_new), which fills the ports in.
///
/// ```ignore
/// emu_hls::sume_block! {
///     /// A block.
///     pub struct Pass<const D: usize, const K: usize, const AW: usize> {
///         buffer: RAM<Bits<D>, AW>,
///     }
/// }
/// let p: Pass<64, 8, 9> = emu_hls::sume_new!(Pass { buffer: Default::default() });
/// ```
#[macro_export]
macro_rules! sume_block {
    ($(#[$meta:meta])* $vis:vis struct $name:ident<const D: usize, const K: usize $(, const $g:ident: usize)*> {
        $($body:tt)*
    }) => {
        $(#[$meta])*
        #[derive(LogicBlock)]
        $vis struct $name<const D: usize, const K: usize $(, const $g: usize)*> {
            /// The clock.
            pub axis_aclk: Signal<In, Clock>,
            /// Reset, active low, synchronous.
            pub axis_resetn: Signal<In, Bit>,
            /// Input data: frame byte `i` of the beat at bits `[8i+7:8i]`.
            pub s_axis_tdata: Signal<In, Bits<D>>,
            /// Input byte enables.
            pub s_axis_tkeep: Signal<In, Bits<K>>,
            /// Input metadata: `[15:0]` length, `[23:16]` one-hot source port, `[127:64]` the
            /// arrival timestamp in ns.
            pub s_axis_tuser: Signal<In, Bits<128>>,
            /// Input beat valid.
            pub s_axis_tvalid: Signal<In, Bit>,
            /// The block takes the input beat.
            pub s_axis_tready: Signal<Out, Bit>,
            /// Input: last beat of the frame.
            pub s_axis_tlast: Signal<In, Bit>,
            /// Output data.
            pub m_axis_tdata: Signal<Out, Bits<D>>,
            /// Output byte enables.
            pub m_axis_tkeep: Signal<Out, Bits<K>>,
            /// Output metadata: `[15:0]` length, `[23:16]` source, `[31:24]` destination ports.
            pub m_axis_tuser: Signal<Out, Bits<128>>,
            /// Output beat valid.
            pub m_axis_tvalid: Signal<Out, Bit>,
            /// The next stage takes the output beat.
            pub m_axis_tready: Signal<In, Bit>,
            /// Output: last beat of the frame.
            pub m_axis_tlast: Signal<Out, Bit>,
            /// A frame was dropped (one cycle, in frame order).
            pub stat_drop_valid: Signal<Out, Bit>,
            /// Its `DropReason` code.
            pub stat_drop_reason: Signal<Out, Bits<8>>,
            $($body)*
        }
    };
}

/// A value of a [`sume_block!`](crate::sume_block) struct: the ports at their defaults and the
/// fields given.
#[macro_export]
macro_rules! sume_new {
    ($name:ident { $($body:tt)* }) => {
        $name {
            axis_aclk: Default::default(),
            axis_resetn: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_axis_tlast: Default::default(),
            stat_drop_valid: Default::default(),
            stat_drop_reason: Default::default(),
            $($body)*
        }
    };
}

crate::sume_block! {
    /// The NF with SUME ports `D` bits wide (`K = D / 8` keep bits): [`Sume64`] or [`Sume256`].
    pub struct SumeTop<const D: usize, const K: usize> {
        _design: Design,
        _model: CycleModel,
        _verilog: String,
    }
}

/// The 64-bit SUME top level.
pub type Sume64 = SumeTop<64, 8>;
/// The 256-bit SUME top level.
pub type Sume256 = SumeTop<256, 32>;

fn bits_to_bytes<const N: usize>(v: Bits<N>, bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (0..8).fold(0u8, |b, k| b | ((v.get_bit(8 * i + k) as u8) << k))).collect()
}

fn bytes_to_bits<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut out = Bits::<N>::default();
    for (i, b) in bytes.iter().enumerate() {
        for k in 0..8 {
            if b >> k & 1 == 1 {
                out = out.replace_bit(8 * i + k, true);
            }
        }
    }
    out
}

fn u128_to_bits(v: u128) -> Bits<128> {
    bytes_to_bits::<128>(&v.to_le_bytes())
}

impl<const D: usize, const K: usize> SumeTop<D, K> {
    /// The block for `design`, whose bus must be `D` bits wide.
    pub fn new(design: &Design) -> Result<Self, String> {
        assert_eq!(D, 8 * K, "SumeTop<D, K> needs D = 8K");
        if design.config.bus_bytes != K {
            return Err(format!("the design is for a {}-bit bus, not {D}", 8 * design.config.bus_bytes));
        }
        let verilog = rtl::verilog(design)?;
        Ok(crate::sume_new!(SumeTop { _design: design.clone(), _model: CycleModel::new(design), _verilog: verilog }))
    }

    /// The model inside (its state elements, its cycle count).
    pub fn model(&self) -> &CycleModel {
        &self._model
    }
}

impl<const D: usize, const K: usize> Logic for SumeTop<D, K> {
    fn update(&mut self) {
        if self.axis_aclk.pos_edge() {
            if !self.axis_resetn.val() {
                self._model = CycleModel::new(&self._design);
            } else {
                let s_axis = self.s_axis_tvalid.val().then(|| Beat {
                    tdata: bits_to_bytes(self.s_axis_tdata.val(), K),
                    tkeep: (0..K).fold(0u64, |m, i| m | ((self.s_axis_tkeep.val().get_bit(i) as u64) << i)),
                    tuser: bits_to_bytes(self.s_axis_tuser.val(), 16)
                        .iter()
                        .rev()
                        .fold(0u128, |acc, b| (acc << 8) | *b as u128),
                    tlast: self.s_axis_tlast.val(),
                });
                self._model.clock(&Inputs { s_axis, m_axis_tready: self.m_axis_tready.val() });
            }
        }
        let o = self._model.outputs();
        self.s_axis_tready.next = o.s_axis_tready;
        self.m_axis_tvalid.next = o.m_axis.is_some();
        let beat = o.m_axis.unwrap_or_default();
        let mut tdata = beat.tdata;
        tdata.resize(K, 0);
        self.m_axis_tdata.next = bytes_to_bits(&tdata);
        self.m_axis_tkeep.next = bytes_to_bits(&beat.tkeep.to_le_bytes()[..K.div_ceil(8)]);
        self.m_axis_tuser.next = u128_to_bits(beat.tuser);
        self.m_axis_tlast.next = beat.tlast;
        self.stat_drop_valid.next = o.drop.is_some();
        self.stat_drop_reason.next = (o.drop.map_or(0, |r| r as u8) as u64).into();
    }

    fn connect(&mut self) {
        self.s_axis_tready.connect();
        self.m_axis_tdata.connect();
        self.m_axis_tkeep.connect();
        self.m_axis_tuser.connect();
        self.m_axis_tvalid.connect();
        self.m_axis_tlast.connect();
        self.stat_drop_valid.connect();
        self.stat_drop_reason.connect();
    }

    fn hdl(&self) -> Verilog {
        let ports = [
            "axis_aclk",
            "axis_resetn",
            "s_axis_tdata",
            "s_axis_tkeep",
            "s_axis_tuser",
            "s_axis_tvalid",
            "s_axis_tready",
            "s_axis_tlast",
            "m_axis_tdata",
            "m_axis_tkeep",
            "m_axis_tuser",
            "m_axis_tvalid",
            "m_axis_tready",
            "m_axis_tlast",
            "stat_drop_valid",
            "stat_drop_reason",
        ];
        let inst = Item::Instance(Instance {
            module: self._design.top_name(),
            name: "nf".into(),
            params: vec![],
            connections: ports.iter().map(|p| (p.to_string(), Expr::id(*p))).collect(),
        });
        Verilog::Wrapper(Wrapper { code: verilog::print::items(&[inst]), cores: self._verilog.clone() })
    }
}

impl<const D: usize, const K: usize> Clocked for SumeTop<D, K> {
    fn outputs(&self) -> Outputs {
        let beat = Beat {
            tdata: bits_to_bytes(self.m_axis_tdata.val(), K),
            tkeep: (0..K).fold(0u64, |m, i| m | ((self.m_axis_tkeep.val().get_bit(i) as u64) << i)),
            tuser: bits_to_bytes(self.m_axis_tuser.val(), 16)
                .iter()
                .rev()
                .fold(0u128, |acc, b| (acc << 8) | *b as u128),
            tlast: self.m_axis_tlast.val(),
        };
        let drop = self
            .stat_drop_valid
            .val()
            .then(|| emu_core::DropReason::from_code(self.stat_drop_reason.val().to_u64() as u8))
            .flatten();
        Outputs { s_axis_tready: self.s_axis_tready.val(), m_axis: self.m_axis_tvalid.val().then_some(beat), drop }
    }

    fn reset(&mut self) {
        self.connect_all();
        self.axis_resetn.next = false;
        self.s_axis_tvalid.next = false;
        self.m_axis_tready.next = false;
        self.axis_aclk.next = false.into();
        crate::hw::settle(self);
        self.axis_aclk.next = true.into();
        crate::hw::settle(self);
    }

    fn clock(&mut self, inputs: &Inputs) {
        self.axis_resetn.next = true;
        self.m_axis_tready.next = inputs.m_axis_tready;
        self.s_axis_tvalid.next = inputs.s_axis.is_some();
        let beat = inputs.s_axis.clone().unwrap_or_default();
        let mut tdata = beat.tdata;
        tdata.resize(K, 0);
        self.s_axis_tdata.next = bytes_to_bits(&tdata);
        self.s_axis_tkeep.next = bytes_to_bits(&beat.tkeep.to_le_bytes()[..K.div_ceil(8)]);
        self.s_axis_tuser.next = u128_to_bits(beat.tuser);
        self.s_axis_tlast.next = beat.tlast;
        self.axis_aclk.next = false.into();
        crate::hw::settle(self);
        self.axis_aclk.next = true.into();
        crate::hw::settle(self);
    }
}
