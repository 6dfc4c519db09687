//! The Verilog of a [`Design`]: the NF's module (ingress, the scheduled FSM, egress) and one
//! module per state element, all through [`crate::verilog`]'s AST.
//!
//! The timing is the cycle model's ([`super::model`]), phase for phase; the names inside the
//! NF's module follow one scheme so a waveform reads like the IR:
//!
//! | Name | What |
//! |---|---|
//! | `fsm_q` | the phase or NF state ([`StateCodes`]) |
//! | `win_q` | the header window, frame byte `i` at bits `[8i+7:8i]`, zero past the frame's end |
//! | `len_q`, `rx_len_q` | the frame's current and received length |
//! | `v7` | IR value `v7` in the state that computes it (a wire) |
//! | `v7_q` | IR value `v7` in later states (a register) |
//! | `v7_p`, `v7_r` | a state element's response: pending flag, and the value as seen later |
//! | `pbuf`, `buf_rd_q` | the packet buffer (block RAM, one bus word per address) and its read register |
//! | `st_<name>` | the instance of state element `<name>` |

use super::{debug, hold, Design};
use crate::hw;
use crate::ir::bounds::Bounds;
use crate::ir::{
    ActionExpr, BinaryOp, BitVec, CastOp, CmpOp, Inst, MetaField, Op, StateId, StateKind, StateOp, StateRole, SumScope,
    Terminator, UnaryOp, Value, ValueDef,
};
use crate::sched::{latency, StateKind as FsmKind, StateNo};
use crate::verilog::{identifier, index_width, Dir, Expr, Instance, Item, Literal, Module, Port, Radix, Stmt};
use emu_core::DropReason;
use std::collections::{HashMap, HashSet};

mod ingress_sums;

/// The codes of `fsm_q`: idle, done, then the NF's states from 2 up.
#[derive(Debug, Clone, Copy)]
pub struct StateCodes {
    width: u32,
}

impl StateCodes {
    /// Waiting for a received frame; with one, the ingress checks and taking it.
    pub const IDLE: u64 = 0;
    /// A decided frame (sent to `dst_q`, or dropped with `done_reason_q`) waiting for the
    /// egress; when the egress takes it, the core is idle in the same cycle.
    pub const DONE: u64 = 1;

    fn new(states: usize) -> StateCodes {
        StateCodes { width: index_width(2 + states as u64) }
    }

    fn code(&self, c: u64) -> Expr {
        Expr::dec(self.width, c as u128)
    }

    fn nf(&self, n: StateNo) -> Expr {
        self.code(2 + n as u64)
    }
}

pub(super) fn id(name: impl Into<String>) -> Expr {
    Expr::id(name)
}

/// A literal of any width up to 256 bits.
fn lit(v: &BitVec) -> Expr {
    let w = v.width() as u32;
    Expr::Lit(Literal::from_limbs(w, v.words().to_vec(), Radix::Hex))
}

pub(super) fn dec(w: u32, v: u64) -> Expr {
    Expr::dec(w, v as u128)
}

/// Byte lane `lane` of a beat's `data`: 0 where its `keep` bit is low.
pub(super) fn lane_byte(keep: Expr, data: Expr, lane: u32) -> Expr {
    Expr::mux(keep.bit_at(lane), data.slice(8 * lane + 7, 8 * lane), Expr::zero(8))
}

/// The reg `out` (3 bits): the input port that the port bits `bit(0..8)` (`tuser[23:16]`)
/// name, as the SUME numbers them: the lowest set bit `b` is port `b / 2` (NF port `k` is bit
/// `2k`, DMA port `k` bit `2k + 1`); none set is port 0.
pub(super) fn port_decoder(out: &str, bit: impl Fn(u32) -> Expr) -> Vec<Item> {
    let mut enc = vec![Stmt::blocking(id(out), Expr::zero(3))];
    for b in (0..8u32).rev() {
        enc.push(Stmt::if_(bit(b), vec![Stmt::blocking(id(out), dec(3, (b / 2) as u64))]));
    }
    vec![Item::reg(out, 3), Item::always_comb(enc)]
}

/// The Verilog modules of `design`: the NF's module first, then its state elements'.
pub fn modules(design: &Design) -> Result<Vec<Module>, String> {
    let mut g = Gen::new(design);
    let nf = g.nf_module()?;
    let mut out = vec![nf];
    out.extend(g.element_modules());
    for m in &mut out {
        m.constant_combs_as_assigns();
    }
    Ok(out)
}

/// Every module as one Verilog source text.
pub fn verilog(design: &Design) -> Result<String, String> {
    Ok(modules(design)?.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("\n"))
}

struct Gen<'a> {
    d: &'a Design,
    codes: StateCodes,
    bus: u32,
    win: u32,
    depth: u64,
    /// Width of `beat_q` and the buffer addresses.
    bw: u32,
    /// Values that need a register (used after the state that computes them).
    registered: HashSet<Value>,
    /// How many low bits of each value can be set: a value register holds only those.
    bounds: Bounds,
    /// Element names in Verilog, by element.
    elem: HashMap<StateId, String>,
    /// The window bytes the core keeps in `win_q`, those the ingress keeps in `in_win_q`, and
    /// those the egress keeps in `tx_win_q` (the bytes the NF writes).
    core: WindowBytes,
    ingress: WindowBytes,
    egress: WindowBytes,
    /// Whether the NF has a sum: then the core reads the packet buffer too.
    sums: bool,
    /// Whether the NF sets the length: then bytes past the shortest length it set read 0.
    sets_len: bool,
    /// Per state, the element requests whose key is known before the state (defined in an
    /// earlier one): their key register `st_<name>_key_q` is loaded on the way into it.
    preload: HashMap<StateNo, Vec<(StateId, Value)>>,
    /// The window's read ports for computed positions, shared by the states: the k-th
    /// computed-position read of a state uses port k (see [`window_read_ports`]).
    read_port: HashMap<Inst, usize>,
    /// Per port, the states and reads that use it.
    read_port_users: Vec<Vec<(StateNo, Inst)>>,
    /// The window's write ports for computed positions, by (write, byte of it): as the read
    /// ports, one byte each (see [`window_write_ports`]).
    write_port: HashMap<(Inst, u32), usize>,
    /// Per write port, the states and byte writes that use it.
    write_port_users: Vec<Vec<(StateNo, (Inst, u32))>>,
}

/// Computed-position reads of the window share read ports across states: one state runs at a
/// time, so the k-th such read of every state can use port k, a shifter over the whole window
/// whose address a multiplexer on the state picks. (A shifter per read costs the DNS server
/// 131 and the memcached cache 1156 shifters over a 2048- to 2560-bit window.) A read's
/// address can only depend on earlier reads of its state, so on lower ports: no loop.
///
/// A port is a shifter over the whole window plus a multiplexer for its address; a read's own
/// shifter is at most that, and less when the read can only reach the window's first bytes
/// (yosys makes it a multiplexer over those). So reads share only when those that can reach
/// past the first quarter of the window ([`Bounds`] of their base) are four or more per port
/// they would need (the DNS server's 131 in 4 ports); then every read shares. The firewall's
/// 13 reads, at most 84 bytes into its 128 after the VLAN tags and IPv4 options, cost its core
/// twice the LUTs in 5 shared ports than in shifters of their own.
fn window_read_ports(d: &Design, bounds: &Bounds) -> (HashMap<Inst, usize>, Vec<Vec<(StateNo, Inst)>>) {
    let f = &d.func;
    let far = |i: Inst| match f.insts[i].op {
        Op::PktRead(a, bytes) => a
            .base
            .and_then(|b| bounds.max(f, b))
            .is_none_or(|m| m.saturating_add(a.offset as u128 + bytes as u128) > (f.window / 4) as u128),
        _ => false,
    };
    let reads: Vec<(StateNo, Vec<Inst>)> = (d.sched.states.iter().enumerate())
        .filter(|(_, st)| st.kind != FsmKind::Sum)
        .map(|(n, st)| {
            let computed = st.insts.iter().copied();
            (n, computed.filter(|&i| matches!(f.insts[i].op, Op::PktRead(a, _) if a.base.is_some())).collect())
        })
        .collect();
    let far_reads = reads.iter().map(|(_, r)| r.iter().filter(|&&i| far(i)).count());
    let (far_total, far_ports) = far_reads.fold((0, 0), |(t, p), c| (t + c, p.max(c)));
    if far_ports == 0 || far_total < 4 * far_ports {
        return (HashMap::new(), vec![]);
    }
    assign_ports(reads)
}

/// Ports for per-state lists of accesses: the k-th access of every state gets port k. The
/// port of each access, and per port the states and accesses that use it.
fn assign_ports<A: Copy + Eq + std::hash::Hash>(
    per_state: impl IntoIterator<Item = (StateNo, Vec<A>)>,
) -> (HashMap<A, usize>, Vec<Vec<(StateNo, A)>>) {
    let mut port = HashMap::new();
    let mut users: Vec<Vec<(StateNo, A)>> = vec![];
    for (n, accesses) in per_state {
        for (k, a) in accesses.into_iter().enumerate() {
            if users.len() == k {
                users.push(vec![]);
            }
            users[k].push((n, a));
            port.insert(a, k);
        }
    }
    (port, users)
}

/// Computed-position writes of the window share write ports the same way: the k-th byte
/// written at a computed position in a state uses port k, and the ports write after the
/// states' own statements. (A case over the window per byte written costs the memcached cache
/// 190 of them.) That order is the state's own only when no constant-position write or
/// length change follows the state's first computed write; a state where one does keeps its
/// writes in place.
fn window_write_ports(d: &Design) -> (HashMap<(Inst, u32), usize>, Vec<Vec<(StateNo, (Inst, u32))>>) {
    let f = &d.func;
    let mut per_state = vec![];
    for (n, st) in d.sched.states.iter().enumerate() {
        if st.kind == FsmKind::Sum {
            continue;
        }
        let mut writes = vec![];
        let mut in_order = true;
        for &i in &st.insts {
            match &f.insts[i].op {
                Op::PktWrite(a, v) if a.base.is_some() => {
                    let bytes = f.values[*v].ty.width() as u32 / 8;
                    writes.extend((0..bytes).map(|k| (i, k)));
                }
                Op::PktWrite(..) | Op::PktSetLen(_) if !writes.is_empty() => in_order = false,
                _ => {}
            }
        }
        if in_order {
            per_state.push((n, writes));
        }
    }
    assign_ports(per_state)
}

/// The operand of a table request that goes to the element's `req_key`: what its
/// comparators (or hash) take.
fn key_operand(op: &StateOp) -> Option<Value> {
    match op {
        StateOp::CamGet(k)
        | StateOp::CamContains(k)
        | StateOp::CamInsert(k, _)
        | StateOp::CamRemove(k)
        | StateOp::LruGet(k)
        | StateOp::LruPeek(k)
        | StateOp::LruContains(k)
        | StateOp::LruInsert(k, _)
        | StateOp::LruRemove(k)
        | StateOp::HashGet(k)
        | StateOp::HashContains(k)
        | StateOp::HashInsert(k, _)
        | StateOp::HashRemove(k)
        | StateOp::TcamLookup(k)
        | StateOp::TcamLookupSlot(k)
        | StateOp::TcamSet(_, k, _, _) => Some(*k),
        _ => None,
    }
}

/// The key requests whose key can be registered ahead: a table's comparators then take a
/// register, not a multiplexer of every state's key (which yosys folds into each comparator,
/// about 760 LUTs for a switch's 16 × 48-bit CAM). A key is loaded ahead when it is an
/// ordinary value computed in an earlier state (not a response, a sum or a block parameter,
/// whose next value is not at hand on every way in).
fn preloads(d: &Design) -> HashMap<StateNo, Vec<(StateId, Value)>> {
    let f = &d.func;
    let mut out: HashMap<StateNo, Vec<(StateId, Value)>> = HashMap::new();
    for (n, st) in d.sched.states.iter().enumerate() {
        for &i in &st.insts {
            let Op::State(s, sop) = &f.insts[i].op else { continue };
            let Some(k) = key_operand(sop) else { continue };
            let ValueDef::Result(def, _) = f.values[k].def else { continue };
            let def_op = &f.insts[def].op;
            let late = matches!(def_op, Op::State(..)) && latency(f, def_op) >= 1 || matches!(def_op, Op::OnesSum(..));
            if !late && d.sched.def_state(f, k).is_some_and(|ds| ds != n) {
                out.entry(n).or_default().push((*s, k));
            }
        }
    }
    out
}

/// Which header-window bytes a window register holds, packed in position order. A byte the NF
/// never names at a constant position (and the ingress checks never read) is not held: the
/// egress and the sum unit take it from the packet buffer, which has the received frame.
/// This keeps the window registers to the bytes the NF uses (14 of 64 for a switch; the
/// egress's to those it writes, none for a switch).
#[derive(Debug, Clone)]
struct WindowBytes {
    /// Per window position, its byte's place in the register.
    slot: Vec<Option<u32>>,
    held: u32,
}

impl WindowBytes {
    fn new(win: u32, held: impl Fn(u32) -> bool) -> WindowBytes {
        let mut slot = vec![None; win as usize];
        let mut next = 0;
        for (p, s) in slot.iter_mut().enumerate() {
            if held(p as u32) {
                *s = Some(next);
                next += 1;
            }
        }
        WindowBytes { slot, held: next }
    }

    fn holds(&self, p: u64) -> bool {
        self.slot.get(p as usize).is_some_and(|s| s.is_some())
    }

    /// Whether every position is held (so positions computed at run time index the register).
    fn all(&self) -> bool {
        self.held as usize == self.slot.len()
    }

    /// Bits `[hi:lo]` of the byte at position `p` in register `reg`.
    fn bits(&self, reg: &str, p: u64, hi: u32, lo: u32) -> Expr {
        let s = self.slot[p as usize].unwrap_or_else(|| panic!("window byte {p} is not held in {reg}"));
        id(reg).slice(8 * s + hi, 8 * s + lo)
    }
}

/// The window positions the NF reads or writes: each constant-position access's bytes, or
/// every position when an access's position is computed.
fn used_window_bytes(f: &crate::ir::Function) -> Vec<bool> {
    let mut used = vec![false; f.window as usize];
    let mut mark = |offset: u32, bytes: u32| {
        for p in offset..offset.saturating_add(bytes).min(f.window) {
            used[p as usize] = true;
        }
    };
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let (addr, bytes) = match &f.insts[i].op {
                Op::PktRead(a, n) => (a, *n as u32),
                Op::PktWrite(a, v) => (a, f.value_type(*v).width() as u32 / 8),
                _ => continue,
            };
            if addr.base.is_some() {
                return vec![true; f.window as usize];
            }
            mark(addr.offset, bytes);
        }
    }
    used
}

/// The window positions the NF can write: each constant-position write's bytes, and for a
/// write at a computed position every position its base's bound ([`Bounds`]) lets it reach
/// (the ICMP responder's writes after the IPv4 options: 78 of its 128 bytes). The egress keeps
/// these bytes of the edited window and sends the others from the packet buffer, which has the
/// received frame.
fn written_window_bytes(f: &crate::ir::Function, bounds: &Bounds) -> Vec<bool> {
    let mut written = vec![false; f.window as usize];
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let Op::PktWrite(a, v) = &f.insts[i].op else { continue };
            let bytes = f.value_type(*v).width() as u128 / 8;
            let reach = match a.base {
                None => Some(0),
                Some(base) => bounds.max(f, base),
            };
            let end = reach.map_or(f.window as u128, |m| m.saturating_add(a.offset as u128 + bytes));
            let end = end.min(f.window as u128) as u32;
            for p in a.offset.min(end)..end {
                written[p as usize] = true;
            }
        }
    }
    written
}

/// How many window bytes the ingress's, the core's and the egress's window registers hold.
pub(crate) fn held_window_bytes(f: &crate::ir::Function) -> (u32, u32, u32) {
    let used = used_window_bytes(f);
    let core = used.iter().filter(|&&u| u).count() as u32;
    let ingress = (0..f.window).filter(|&p| used[p as usize] || checked_window_bytes(p)).count() as u32;
    let egress = written_window_bytes(f, &Bounds::new(f)).iter().filter(|&&w| w).count() as u32;
    (ingress, core, egress)
}

/// The window positions the ingress checks read: the three EtherType places (two VLAN tags)
/// and the first four bytes of an IPv4 header after each.
fn checked_window_bytes(p: u32) -> bool {
    (12..26).contains(&p)
}

/// Width of the saturated byte positions (every position past 2^17 − 1 is past every frame).
const POS: u32 = 17;
/// Width of a computed packet address: a saturated base plus a 32-bit offset.
const ADDR: u32 = 34;

impl<'a> Gen<'a> {
    fn new(d: &'a Design) -> Gen<'a> {
        let f = &d.func;
        let mut registered = HashSet::new();
        for (n, st) in d.sched.states.iter().enumerate() {
            let mut uses: Vec<Value> = st.insts.iter().flat_map(|i| f.insts[*i].op.args()).collect();
            if st.ends_block {
                uses.extend(d.sched.exit_uses(f, st.block));
            }
            for v in uses {
                if d.sched.def_state(f, v) != Some(n) || matches!(f.values[v].def, ValueDef::Param(..)) {
                    registered.insert(v);
                }
            }
        }
        for &b in &f.layout {
            registered.extend(f.blocks[b].params.iter().copied());
        }
        let elem = f.states.iter().map(|(s, decl)| (s, identifier(&decl.name))).collect();
        let depth = d.buffer_words() as u64;
        let used = used_window_bytes(f);
        let core = WindowBytes::new(f.window, |p| used[p as usize]);
        // (A streamed sum adds its first beats' bytes from the ingress's window registers.)
        let early = d.sched.streamed.iter().map(|s| s.early_bytes(d.config.bus_bytes as u32)).max().unwrap_or(0);
        let ingress = WindowBytes::new(f.window, |p| used[p as usize] || checked_window_bytes(p) || p < early);
        let bounds = Bounds::new(f);
        let written = written_window_bytes(f, &bounds);
        let egress = WindowBytes::new(f.window, |p| written[p as usize]);
        let sums = d.sched.states.iter().any(|st| st.kind == FsmKind::Sum);
        let sets_len =
            f.layout.iter().any(|&b| f.blocks[b].insts.iter().any(|&i| matches!(f.insts[i].op, Op::PktSetLen(_))));
        let (read_port, read_port_users) = window_read_ports(d, &bounds);
        let (write_port, write_port_users) = window_write_ports(d);
        Gen {
            d,
            codes: StateCodes::new(d.sched.states.len()),
            bus: d.config.bus_bytes as u32,
            win: f.window,
            depth,
            bw: index_width(depth + 1),
            registered,
            bounds,
            elem,
            core,
            ingress,
            egress,
            sums,
            sets_len,
            preload: preloads(d),
            read_port,
            read_port_users,
            write_port,
            write_port_users,
        }
    }

    /// The shared window write ports: port k's enable, position and byte are those of the
    /// k-th computed-position byte write of the state the FSM is in (wires `<i>_w<b>_en`,
    /// `_pos`, `_byte`), and the statements that write it, to run after the states'.
    fn window_write_port_logic(&self) -> (Vec<Item>, Vec<Stmt>) {
        let pos = index_width(self.win as u64);
        let (mut items, mut stmts) = (vec![], vec![]);
        for (k, users) in self.write_port_users.iter().enumerate() {
            let sig = |what: &str| format!("wrwin{k}_{what}");
            let parts = [("en", 1), ("pos", pos), ("byte", 8)];
            for (what, w) in parts {
                items.push(Item::reg(sig(what), w));
            }
            let arms = users
                .iter()
                .map(|&(n, (i, b))| {
                    let set =
                        parts.iter().map(|(what, _)| Stmt::blocking(id(sig(what)), id(format!("{i}_w{b}_{what}"))));
                    (vec![self.codes.nf(n)], set.collect())
                })
                .collect();
            items.push(Item::always_comb(vec![Stmt::Case {
                subject: id("fsm_q"),
                arms,
                default: Some(parts.iter().map(|&(what, w)| Stmt::blocking(id(sig(what)), Expr::zero(w))).collect()),
            }]));
            stmts.push(Stmt::if_(id(sig("en")), vec![self.window_byte_write(id(sig("pos")), id(sig("byte")))]));
        }
        (items, stmts)
    }

    /// Window byte POS (of `index_width(window)` bits, below the window's size) set to BYTE:
    /// a case over the position, not `win_q[{pos, 3'h0} +: 8]`, over which yosys's `proc`
    /// takes hours for a wide window (the DNS server's), where it takes seconds over the case.
    fn window_byte_write(&self, pos: Expr, byte: Expr) -> Stmt {
        let w = index_width(self.win as u64);
        let arms =
            (0..self.win as u64).map(|p| (vec![dec(w, p)], vec![Stmt::nb(self.wbyte(p), byte.clone())])).collect();
        Stmt::Case { subject: pos, arms, default: Some(vec![]) }
    }

    /// Wire `name`: the window shifted down to byte position `addr` (its low byte is that
    /// byte).
    fn window_shifter(&self, name: &str, addr: Expr) -> Vec<Item> {
        let by = Expr::concat(vec![addr, Expr::zero(3)]);
        vec![Item::wire(name, 8 * self.win), Item::assign(id(name), id("win_q").binary(crate::verilog::BinOp::Shr, by))]
    }

    /// The shared window read ports: port k's address is that of the k-th computed-position
    /// read of the state the FSM is in, and `rdwin<k>_sh` the window shifted to it.
    fn window_read_port_logic(&self) -> Vec<Item> {
        let mut items = vec![];
        for (k, users) in self.read_port_users.iter().enumerate() {
            let addr = format!("rdwin{k}_addr");
            items.push(Item::reg(addr.clone(), ADDR));
            let arms = users
                .iter()
                .map(|&(n, i)| {
                    (vec![self.codes.nf(n)], vec![Stmt::blocking(id(addr.clone()), id(format!("{i}_addr")))])
                })
                .collect();
            items.push(Item::always_comb(vec![Stmt::Case {
                subject: id("fsm_q"),
                arms,
                default: Some(vec![Stmt::blocking(id(addr.clone()), Expr::zero(ADDR))]),
            }]));
            items.extend(self.window_shifter(&format!("rdwin{k}_sh"), id(addr)));
        }
        items
    }

    /// Moving from NF state `from` to NF state `to`: the state code, and the keys `to`
    /// requests loaded into their registers (the value as it is at the end of `from`).
    fn goto(&self, from: StateNo, to: StateNo) -> Vec<Stmt> {
        let f = &self.d.func;
        let mut s = vec![Stmt::nb(id("fsm_q"), self.codes.nf(to))];
        for &(e, k) in self.preload.get(&to).into_iter().flatten() {
            let now = if self.d.sched.def_state(f, k) == Some(from) { id(k.to_string()) } else { id(format!("{k}_q")) };
            let w = self.element_port_width(e, "req_key");
            s.push(Stmt::nb(id(format!("st_{}_key_q", self.elem[&e])), debug::fit(now, self.width(k), w)));
        }
        s
    }

    /// The ingress holds a whole frame for the core: every table in block RAM has been swept
    /// empty (none is `sweeping` after a reset), and it is not the debug unit's (an in-band
    /// control frame).
    fn frame_ready(&self) -> Expr {
        let swept = self
            .d
            .func
            .states
            .iter()
            .filter(|(_, decl)| decl.kind.in_sets())
            .fold(self.received("full"), |acc, (s, _)| acc.land(id(format!("st_{}_sweeping", self.elem[&s])).lnot()));
        match self.inband() {
            // The unit's own decode (`dbg_ib_frame`) waits for the frame to be held; the core
            // must know it now, from the same fields as the ingress has them after this edge.
            Some(m) => {
                let control = self
                    .received("src")
                    .equals(dec(8, m as u64))
                    .land(self.in_be16(12).equals(Expr::hex(16, emu_debug::protocol::ETHERTYPE as u128)))
                    .land(self.received("len").at_least(dec(16, 14)));
                swept.land(control.lnot())
            }
            None => swept,
        }
    }

    /// Input lane `lane`'s byte of the beat: 0 where its `tkeep` bit is low.
    fn beat_byte(&self, lane: u32) -> Expr {
        lane_byte(self.input("tkeep"), self.input("tdata"), lane)
    }

    /// The ingress's input signal `t<sig>`: the module's `s_axis_t<sig>`, or with the debug
    /// unit, the hold buffer's stream in front of it ([`hold`]).
    fn input(&self, sig: &str) -> Expr {
        if self.d.config.debug {
            id(format!("in_axis_{sig}"))
        } else {
            id(format!("s_axis_{sig}"))
        }
    }

    /// The debug unit's management port, when it has the in-band path.
    fn inband(&self) -> Option<u8> {
        self.d.config.debug_port.filter(|_| self.d.config.debug)
    }

    fn log2_bus(&self) -> u32 {
        self.bus.trailing_zeros()
    }

    /// Byte `i` (a constant position) of the core's window: zero past the window.
    fn wbyte(&self, i: u64) -> Expr {
        if i < self.win as u64 {
            self.core.bits("win_q", i, 7, 0)
        } else {
            Expr::zero(8)
        }
    }

    /// The core's window bytes as the ingress holds them, for taking a frame.
    fn core_from_ingress(&self) -> Expr {
        let bytes: Vec<Expr> =
            (0..self.win as u64).rev().filter(|&p| self.core.holds(p)).map(|p| self.in_bits(p, 7, 0)).collect();
        if bytes.is_empty() {
            Expr::zero(8)
        } else {
            Expr::concat(bytes)
        }
    }

    /// The egress's window bytes as the core holds them, for handing a frame over.
    fn egress_from_core(&self) -> Expr {
        let bytes: Vec<Expr> =
            (0..self.win as u64).rev().filter(|&p| self.egress.holds(p)).map(|p| self.wbyte(p)).collect();
        Expr::concat(bytes)
    }

    /// Bits `[hi:lo]` of byte `i` of the received window (a byte the checks read).
    fn in_bits(&self, i: u64, hi: u32, lo: u32) -> Expr {
        self.ingress.bits("in_win_d", i, hi, lo)
    }

    /// The received frame's `len`, `src` (port), `ts` (timestamp), `over` (oversize) or `full`
    /// (a whole frame is there) as the checks and the core read them: the ingress's registers
    /// as they are after this edge, so a frame is taken in the edge its last beat arrives.
    fn received(&self, what: &str) -> Expr {
        match what {
            "full" => id("in_full_q").lor(self.take_beat().land(self.input("tlast"))),
            _ => id(format!("in_{what}_d")),
        }
    }

    fn width(&self, v: Value) -> u32 {
        self.d.func.value_type(v).width() as u32
    }

    /// `k` when `v` is the constant 2<sup>k</sup>.
    fn power_of_two(&self, v: Value) -> Option<u64> {
        let c = self.d.func.as_const(v)?;
        let ones: u32 = c.words().iter().map(|w| w.count_ones()).sum();
        (ones == 1).then(|| {
            c.words().iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| 64 * i as u64 + w.trailing_zeros() as u64)
        })?
    }

    /// The bits of `v`'s register: those that can be set ([`Bounds`]). A register narrower
    /// than its value is `<v>_qb`, read through the wire `<v>_q` that zero-extends it.
    fn register_bits(&self, v: Value) -> u32 {
        self.bounds.bits(&self.d.func, v) as u32
    }

    /// `<v>_q <= e`, `e` being a signal of `w` bits, at most `v`'s width.
    fn register_set(&self, v: Value, e: Expr, w: u32) -> Stmt {
        let k = self.register_bits(v);
        let reg = if k == self.width(v) { format!("{v}_q") } else { format!("{v}_qb") };
        Stmt::nb(id(reg), debug::fit(e, w, k))
    }

    /// `<v>_q <= 0`.
    fn register_clear(&self, v: Value) -> Stmt {
        self.register_set(v, Expr::zero(1), 1)
    }

    /// `v` as seen in state `at`.
    fn opnd(&self, v: Value, at: StateNo) -> Expr {
        let f = &self.d.func;
        let name = v.to_string();
        match f.values[v].def {
            ValueDef::Param(..) => id(format!("{name}_q")),
            ValueDef::Result(i, _) => {
                let def = self.d.sched.inst_state[&i];
                let late = matches!(f.insts[i].op, Op::State(..)) && latency(f, &f.insts[i].op) >= 1;
                if def == at && !late {
                    id(name)
                } else if late {
                    id(format!("{name}_r"))
                } else {
                    id(format!("{name}_q"))
                }
            }
            ValueDef::Detached => panic!("{v} is detached"),
        }
    }

    /// The index width of an array of `size` words: one bit more than numbering them takes,
    /// so an index saturated to it ([`Gen::saturate`]) is out of range exactly when the IR's
    /// index is.
    fn array_index_bits(&self, size: u32) -> u32 {
        index_width(size as u64) + 1
    }

    /// `e` (of width `w`) as `bits` bits: zero-extended, or all ones when a bit above them is
    /// set (an index or position that large is past every array and frame).
    fn saturate(e: Expr, w: u32, bits: u32) -> Expr {
        match w.cmp(&bits) {
            std::cmp::Ordering::Equal => e,
            std::cmp::Ordering::Less => Expr::concat(vec![Expr::zero(bits - w), e]),
            std::cmp::Ordering::Greater => {
                Expr::mux(e.clone().slice(w - 1, bits).any(), lit(&BitVec::ones(bits as u16)), e.slice(bits - 1, 0))
            }
        }
    }

    /// `e` (of width `w`) saturated to [`POS`] bits.
    fn sat(e: Expr, w: u32) -> Expr {
        Self::saturate(e, w, POS)
    }

    fn nf_module(&mut self) -> Result<Module, String> {
        let d = self.d;
        let f = &d.func;
        let (bus, win) = (self.bus, self.win);
        let mut m = Module::new(d.top_name());
        m.ports = vec![
            Port::input("axis_aclk", 1),
            Port::input("axis_resetn", 1),
            Port::input("s_axis_tdata", 8 * bus),
            Port::input("s_axis_tkeep", bus),
            Port::input("s_axis_tuser", 128),
            Port::input("s_axis_tvalid", 1),
            Port::output_wire("s_axis_tready", 1),
            Port::input("s_axis_tlast", 1),
            Port::output_wire("m_axis_tdata", 8 * bus),
            Port::output_wire("m_axis_tkeep", bus),
            Port::output_wire("m_axis_tuser", 128),
            Port::output_wire("m_axis_tvalid", 1),
            Port::input("m_axis_tready", 1),
            Port::output_wire("m_axis_tlast", 1),
            Port::output_wire("stat_drop_valid", 1),
            Port::output_wire("stat_drop_reason", 8),
        ];
        if d.config.debug {
            m.ports.extend(
                debug::PORTS.map(|(name, w, out)| if out { Port::output_wire(name, w) } else { Port::input(name, w) }),
            );
        }
        let mut items = vec![Item::comment(format!(
            "{}: generated by emu-hls from the NF's Rust source. Three stages, each on its own frame:\n\
             the ingress receives one into a buffer slot, the core checks and processes the one\n\
             before ({} NF states), the egress sends the one before that. Bus {} bits, window {}\n\
             bytes, {} buffer words per slot.",
            f.name,
            d.sched.states.len(),
            8 * bus,
            win,
            self.depth
        ))];
        for (name, w) in self.registers() {
            items.push(Item::reg(name, w));
        }
        // Three slots of the buffer: the ingress fills one, the core's frame is in another and
        // the egress sends from the third (block RAM, one bus word per address).
        items.push(Item::memory("pbuf", 8 * bus, 3u64 << self.bw));
        items.push(Item::wire("rst", 1));
        items.push(Item::assign(id("rst"), id("axis_resetn").lnot()));

        items.extend(self.ingress_logic());
        items.extend(self.check_logic());
        items.extend(self.frame_word_logic());
        items.extend(self.egress_logic());
        items.extend(self.window_read_port_logic());
        let (sum_items, sum_arms) = self.sum_logic()?;
        items.extend(sum_items);
        let mut arms: Vec<(Vec<Expr>, Vec<Stmt>)> = vec![];
        let mut value_items = vec![];
        let mut captures = vec![];
        for n in 0..d.sched.states.len() {
            let (vi, body) = self.state_logic(n, &sum_arms)?;
            value_items.extend(vi);
            arms.push((vec![self.codes.nf(n)], body));
        }
        for v in f.values.keys() {
            if self.registered.contains(&v) && f.values[v].def != ValueDef::Detached {
                let (w, k) = (self.width(v), self.register_bits(v));
                if k == w {
                    items.push(Item::reg(format!("{v}_q"), w));
                } else {
                    // The bits above the value's bound are always zero: no flip-flops for them.
                    items.push(Item::reg(format!("{v}_qb"), k));
                    items.push(Item::wire(format!("{v}_q"), w));
                    items.push(Item::assign(id(format!("{v}_q")), debug::fit(id(format!("{v}_qb")), k, w)));
                }
            }
        }
        // Responses of state elements: a pending flag for the cycle the response is on the
        // element's ports (the one after the request, or the one after that for a hash table).
        for (n, st) in d.sched.states.iter().enumerate() {
            for &i in &st.insts {
                let op = &f.insts[i].op;
                let lat = latency(f, op);
                if !(matches!(op, Op::State(..)) && lat >= 1) {
                    continue;
                }
                for (k, &r) in f.results(i).iter().enumerate() {
                    let resp = self.response(i, k)?;
                    let w = self.width(r);
                    if !self.registered.contains(&r) {
                        continue; // never used
                    }
                    items.push(Item::reg(format!("{r}_p"), 1));
                    items.push(Item::wire(format!("{r}_r"), w));
                    items.push(Item::assign(
                        id(format!("{r}_r")),
                        Expr::mux(id(format!("{r}_p")), resp.clone(), id(format!("{r}_q"))),
                    ));
                    let asked = id("fsm_q").equals(self.codes.nf(n));
                    if lat == 2 {
                        items.push(Item::reg(format!("{r}_p1"), 1));
                        captures.push(Stmt::nb(id(format!("{r}_p1")), asked));
                        captures.push(Stmt::nb(id(format!("{r}_p")), id(format!("{r}_p1"))));
                    } else {
                        captures.push(Stmt::nb(id(format!("{r}_p")), asked));
                    }
                    captures.push(Stmt::if_(id(format!("{r}_p")), vec![self.register_set(r, resp, w)]));
                }
            }
        }
        items.extend(value_items);
        items.extend(self.element_requests()?);

        // The ingress: takes beats while it holds no frame, into its registers (their values
        // after the edge are the `in_*_d` wires of `ingress_next`).
        let take_beat = self.take_beat();
        let mut receive = vec![];
        if (0..win as u64).any(|i| self.ingress.holds(i)) {
            receive.push(Stmt::nb(id("in_win_q"), id("in_win_d")));
        }
        for name in ["len", "over", "src", "ts"] {
            receive.push(Stmt::nb(id(format!("in_{name}_q")), id(format!("in_{name}_d"))));
        }
        receive.extend(self.ingress_sum_receive());
        receive.push(Stmt::if_else(
            self.input("tlast"),
            vec![Stmt::nb(id("in_full_q"), Expr::bit(true))],
            vec![Stmt::if_(
                id("in_beat_q").less_than(dec(self.bw, self.depth)),
                vec![Stmt::nb(id("in_beat_q"), id("in_beat_q").plus(dec(self.bw, 1)))],
            )],
        ));
        // Emptying the ingress (its frame taken by the core, or dropped by the checks).
        let free_ingress = vec![
            Stmt::nb(id("in_full_q"), Expr::bit(false)),
            Stmt::nb(id("in_len_q"), Expr::zero(16)),
            Stmt::nb(id("in_over_q"), Expr::bit(false)),
            Stmt::nb(id("in_beat_q"), Expr::zero(self.bw)),
        ];
        let mut take = free_ingress.clone();
        take.extend([
            Stmt::nb(id("win_q"), self.core_from_ingress()),
            Stmt::nb(id("len_q"), self.received("len")),
            Stmt::nb(id("rx_len_q"), self.received("len")),
            Stmt::nb(id("min_len_q"), self.received("len")),
            Stmt::nb(id("in_port_q"), self.received("src")),
            Stmt::nb(id("ts_q"), self.received("ts")),
            Stmt::nb(id("slot_q"), id("in_slot_q")),
            Stmt::nb(id("in_slot_q"), id("in_slot_next")),
            Stmt::nb(id("fsm_q"), self.codes.nf(0)),
        ]);
        take.extend(self.ingress_sum_take());
        // (The refused frame's port and length are the core's for the debug unit's record.)
        let mut refuse = self.decided_drop(id("check_reason"));
        refuse
            .extend([Stmt::nb(id("in_port_q"), self.received("src")), Stmt::nb(id("rx_len_q"), self.received("len"))]);
        refuse.extend(free_ingress.clone());
        // (A break holds frames in front of the ingress, in the hold buffer: the core takes
        // every frame that reaches it.)
        let ready = self.frame_ready();
        let mut idle = vec![Stmt::if_(
            ready.clone(),
            vec![Stmt::if_else(id("check_reason").not_equals(Expr::zero(8)), refuse, take)],
        )];
        if let Some(m) = self.inband() {
            // A control frame from the management port is the debug unit's, not the core's:
            // its reply goes to the egress as a decided frame (with `dbg_reply_q` set, the
            // egress sends the reply's bytes), or it is dropped.
            let mut reply = vec![
                Stmt::nb(id("fsm_q"), self.codes.code(StateCodes::DONE)),
                Stmt::nb(id("done_drop_q"), Expr::bit(false)),
                Stmt::nb(id("len_q"), dec(16, debug::REPLY_LEN)),
                Stmt::nb(id("dst_q"), dec(4, 1 << m)),
                Stmt::nb(id("in_port_q"), dec(8, m as u64)),
            ];
            reply.extend(free_ingress.clone());
            idle = vec![Stmt::if_else(
                id("dbg_ib_go"),
                reply,
                vec![Stmt::if_else(id("dbg_ib_drop"), free_ingress.clone(), idle)],
            )];
        }
        // Handing the decided frame to the egress: a drop shows for a cycle, a frame to send
        // takes the egress's registers (its edited window bytes among them).
        let mut to_egress = vec![
            Stmt::nb(id("tx_full_q"), Expr::bit(true)),
            Stmt::nb(id("beat_q"), Expr::zero(self.bw)),
            Stmt::nb(id("tx_len_q"), id("len_q")),
            Stmt::nb(id("tx_min_len_q"), id("min_len_q")),
            Stmt::nb(id("tx_port_q"), id("in_port_q")),
            Stmt::nb(id("tx_dst_q"), id("dst_q")),
            Stmt::nb(id("tx_slot_q"), id("slot_q")),
        ];
        if self.egress.held > 0 {
            to_egress.push(Stmt::nb(id("tx_win_q"), self.egress_from_core()));
        }
        if self.inband().is_some() {
            to_egress.push(Stmt::nb(id("tx_reply_q"), id("dbg_reply_q")));
        }
        let mut done = vec![
            Stmt::if_else(
                id("done_drop_q"),
                vec![Stmt::nb(id("drop_valid_q"), Expr::bit(true)), Stmt::nb(id("drop_reason_q"), id("done_reason_q"))],
                to_egress,
            ),
            Stmt::nb(id("fsm_q"), self.codes.code(StateCodes::IDLE)),
        ];
        done.extend(idle.clone());
        let done = vec![Stmt::if_(id("tx_free"), done)];
        let mut case_arms =
            vec![(vec![self.codes.code(StateCodes::IDLE)], idle), (vec![self.codes.code(StateCodes::DONE)], done)];
        case_arms.extend(arms);
        // The egress sends a beat when the next stage takes it (before the core's statements:
        // a frame handed over in the cycle of the last beat is the next one).
        let send = Stmt::if_(
            id("tx_full_q").land(id("m_axis_tready")),
            vec![Stmt::if_else(
                id("tx_last"),
                vec![Stmt::nb(id("tx_full_q"), Expr::bit(false))],
                vec![Stmt::nb(id("beat_q"), id("beat_q").plus(dec(self.bw, 1)))],
            )],
        );
        let mut run = vec![Stmt::nb(id("drop_valid_q"), Expr::bit(false)), Stmt::if_(take_beat, receive), send];
        run.extend(captures);
        run.push(Stmt::Case {
            subject: id("fsm_q"),
            arms: case_arms,
            default: Some(self.decided_drop(dec(8, DropReason::Malformed as u64))),
        });
        let (write_port_items, write_port_stmts) = self.window_write_port_logic();
        items.extend(write_port_items);
        run.extend(write_port_stmts);
        let reset = vec![
            Stmt::nb(id("fsm_q"), self.codes.code(StateCodes::IDLE)),
            Stmt::nb(id("in_full_q"), Expr::bit(false)),
            Stmt::nb(id("in_len_q"), Expr::zero(16)),
            Stmt::nb(id("in_over_q"), Expr::bit(false)),
            Stmt::nb(id("in_beat_q"), Expr::zero(self.bw)),
            Stmt::nb(id("in_slot_q"), Expr::zero(2)),
            Stmt::nb(id("tx_full_q"), Expr::bit(false)),
            Stmt::nb(id("drop_valid_q"), Expr::bit(false)),
            Stmt::nb(id("sum_busy_q"), Expr::bit(false)),
        ];
        items.push(Item::comment("The ingress, the core's phases and the NF's states, the egress."));
        items.push(Item::always_posedge("axis_aclk", vec![Stmt::if_else(id("rst"), reset, run)]));
        // Initial values, as after a reset (for simulators that start without one).
        items.push(Item::Initial(
            self.registers().into_iter().map(|(name, w)| Stmt::blocking(id(name), Expr::zero(w))).collect(),
        ));
        items.push(Item::assign(id("stat_drop_valid"), id("drop_valid_q")));
        items.push(Item::assign(id("stat_drop_reason"), id("drop_reason_q")));
        if d.config.debug {
            let core = debug::Core {
                idle: id("core_free"),
                held: ready,
                empty: id("in_beat_q").equals(Expr::zero(self.bw)),
                handoff: id("handoff"),
                first_beat: id("in_full_q")
                    .lnot()
                    .land(self.input("tvalid"))
                    .land(id("in_len_q").equals(Expr::zero(16)))
                    .land(id("in_over_q").lnot()),
                beat: id("in_full_q").lnot().land(self.input("tvalid")),
                beat_no: (id("in_beat_q"), self.bw),
                beat_data: Expr::concat((0..self.bus).rev().map(|l| self.beat_byte(l)).collect()),
                bus: self.bus,
            };
            items.extend(debug::items(&self.debug_symbols(), &core, self.inband()));
            items.extend(hold::items(&hold::Shape { bus: self.bus, depth: self.depth, inband: self.inband() }));
        }
        m.items = items;
        Ok(m)
    }

    /// Whether the ingress takes a beat in this cycle.
    fn take_beat(&self) -> Expr {
        id("in_full_q").lnot().land(self.input("tvalid"))
    }

    /// The ingress's registers as they are after this edge, `in_*_d`: the window bytes it
    /// holds, the length, oversize, the input port and the timestamp. The checks and the core
    /// read these ([`Gen::received`]), so a frame is checked and taken in the edge its last
    /// beat arrives.
    fn ingress_next(&self) -> Vec<Item> {
        let (bus, win) = (self.bus, self.win);
        let take_beat = self.take_beat();
        let mut items = vec![];
        let held: Vec<u64> = (0..win as u64).filter(|&i| self.ingress.holds(i)).collect();
        if !held.is_empty() {
            let at = |k: u64| id("in_beat_q").equals(dec(self.bw, k));
            let bytes = held.iter().rev().map(|&i| {
                let (beat, lane) = (i / bus as u64, (i % bus as u64) as u32);
                let q = self.ingress.bits("in_win_q", i, 7, 0);
                // The first beat clears the window: bytes past the frame's end read 0.
                let got = if beat == 0 {
                    Expr::mux(at(0), self.beat_byte(lane), q.clone())
                } else {
                    Expr::mux(at(beat), self.beat_byte(lane), Expr::mux(at(0), Expr::zero(8), q.clone()))
                };
                Expr::mux(take_beat.clone(), got, q)
            });
            items.push(Item::wire("in_win_d", 8 * held.len() as u32));
            items.push(Item::assign(id("in_win_d"), Expr::concat(bytes.collect())));
        }
        let first = id("in_len_q").equals(Expr::zero(16)).land(id("in_over_q").lnot());
        let max = dec(16, self.d.config.max_frame as u64);
        for (name, w, e) in [
            ("len", 16, Expr::mux(id("rx_over"), max, id("rx_len_next").slice(15, 0))),
            ("over", 1, id("in_over_q").lor(id("rx_over"))),
            ("src", 8, Expr::mux(first.clone(), Expr::concat(vec![Expr::zero(5), id("src_port")]), id("in_src_q"))),
            ("ts", 64, Expr::mux(first, self.input("tuser").slice(127, 64), id("in_ts_q"))),
        ] {
            let d = format!("in_{name}_d");
            items.push(Item::wire(d.clone(), w));
            items.push(Item::assign(id(d), Expr::mux(take_beat.clone(), e, id(format!("in_{name}_q")))));
        }
        items
    }

    /// Byte counting, the input port and the packet buffer.
    fn ingress_logic(&self) -> Vec<Item> {
        let bus = self.bus;
        let mut items = vec![Item::comment("Ingress: bytes of the beat, the input port, the packet buffer.")];
        let count = (0..bus)
            .map(|j| Expr::concat(vec![Expr::zero(16), self.input("tkeep").bit_at(j)]))
            .reduce(|a, b| a.plus(b))
            .expect("a bus has lanes");
        items.push(Item::wire("rx_len_next", 17));
        items.push(Item::assign(id("rx_len_next"), Expr::concat(vec![Expr::zero(1), id("in_len_q")]).plus(count)));
        items.push(Item::wire("rx_over", 1));
        items.push(Item::assign(id("rx_over"), dec(17, self.d.config.max_frame as u64).less_than(id("rx_len_next"))));
        items.extend(port_decoder("src_port", |b| self.input("tuser").bit_at(16 + b)));
        items.extend(self.ingress_next());
        items.extend(self.ingress_sum_logic());
        // The buffer: the ingress writes its slot; the egress reads its own a word ahead (the
        // first word of a frame in the cycle it takes it), and for sums the core reads its own.
        items.extend(self.stage_wires());
        let mut edge = vec![Stmt::if_(
            id("in_full_q").lnot().land(self.input("tvalid")).land(id("in_beat_q").less_than(dec(self.bw, self.depth))),
            vec![Stmt::nb(id("pbuf").index(Expr::concat(vec![id("in_slot_q"), id("in_beat_q")])), self.input("tdata"))],
        )];
        let next_beat = Expr::mux(id("m_axis_tready"), id("beat_q").plus(dec(self.bw, 1)), id("beat_q"));
        let tx_addr = Expr::mux(id("tx_take"), Expr::zero(self.bw), next_beat);
        items.push(Item::wire("tx_rd_addr", self.bw));
        items.push(Item::assign(
            id("tx_rd_addr"),
            Expr::mux(tx_addr.clone().at_least(dec(self.bw, self.depth)), dec(self.bw, self.depth - 1), tx_addr),
        ));
        edge.push(Stmt::nb(id("tx_rd_q"), id("pbuf").index(Expr::concat(vec![id("tx_slot_next"), id("tx_rd_addr")]))));
        if self.sums {
            items.push(Item::reg("rd_addr", self.bw));
            edge.push(Stmt::nb(id("buf_rd_q"), id("pbuf").index(Expr::concat(vec![id("slot_q"), id("rd_addr")]))));
        }
        items.push(Item::always_posedge("axis_aclk", edge));
        items
    }

    /// How the stages pass frames on: `tx_free` (the egress holds no frame, or sends its last
    /// beat now), `handoff` (the core hands its decided frame over), `tx_take` (a frame to
    /// send), `core_free` (the core can take a frame: idle, or handing one over), and
    /// `in_slot_next`, the ingress's slot once the core takes its frame: the one neither the
    /// core's frame nor the egress's is in.
    fn stage_wires(&self) -> Vec<Item> {
        let done = id("fsm_q").equals(self.codes.code(StateCodes::DONE));
        let mut items = vec![];
        let mut wire = |name: &str, w: u32, e: Expr| {
            items.push(Item::wire(name, w));
            items.push(Item::assign(id(name), e));
        };
        wire("tx_free", 1, id("tx_full_q").lnot().lor(id("m_axis_tready").land(id("tx_last"))));
        wire("handoff", 1, done.land(id("tx_free")));
        wire("tx_take", 1, id("handoff").land(id("done_drop_q").lnot()));
        wire("core_free", 1, id("fsm_q").equals(self.codes.code(StateCodes::IDLE)).lor(id("handoff")));
        wire("tx_slot_next", 2, Expr::mux(id("tx_take"), id("slot_q"), id("tx_slot_q")));
        let (a, b) = (id("in_slot_q"), id("tx_slot_next"));
        let avoids = |k: u64| a.clone().not_equals(dec(2, k)).land(b.clone().not_equals(dec(2, k)));
        wire("in_slot_next", 2, Expr::mux(avoids(0), dec(2, 0), Expr::mux(avoids(1), dec(2, 1), dec(2, 2))));
        items
    }

    /// The NF module's registers besides the values' and the debug unit's: the ingress's, the
    /// core's and the egress's.
    fn registers(&self) -> Vec<(String, u32)> {
        let regs: Vec<(&str, u32)> = vec![
            // Ingress: the frame being received or held, and its buffer slot.
            ("in_win_q", 8 * self.ingress.held),
            ("in_len_q", 16),
            ("in_over_q", 1),
            ("in_src_q", 8),
            ("in_ts_q", 64),
            ("in_beat_q", self.bw),
            ("in_slot_q", 2),
            ("in_full_q", 1),
            // The core: the frame it works on, and its verdict.
            ("fsm_q", self.codes.width),
            ("win_q", 8 * self.core.held.max(1)),
            ("len_q", 16),
            ("rx_len_q", 16),
            ("min_len_q", 16),
            ("in_port_q", 8),
            ("ts_q", 64),
            ("slot_q", 2),
            ("dst_q", 4),
            ("done_drop_q", 1),
            ("done_reason_q", 8),
            ("sum_busy_q", 1),
            ("sum_word_q", self.bw),
            ("sum_acc_q", 32),
            // The egress: the frame it sends, and the drop it shows.
            ("tx_full_q", 1),
            ("beat_q", self.bw),
            ("tx_len_q", 16),
            ("tx_min_len_q", 16),
            ("tx_port_q", 8),
            ("tx_dst_q", 4),
            ("tx_slot_q", 2),
            ("tx_win_q", 8 * self.egress.held.max(1)),
            ("tx_rd_q", 8 * self.bus),
            ("drop_valid_q", 1),
            ("drop_reason_q", 8),
        ];
        let mut regs: Vec<(String, u32)> = regs.into_iter().map(|(n, w)| (n.to_string(), w)).collect();
        if self.sums {
            regs.push(("buf_rd_q".into(), 8 * self.bus));
        }
        if self.inband().is_some() {
            regs.push(("tx_reply_q".into(), 1));
        }
        regs.extend(self.ingress_sum_registers());
        regs
    }

    /// The big-endian 16 bits at `at` of the received window.
    fn in_be16(&self, at: u64) -> Expr {
        Expr::concat(vec![self.in_bits(at, 7, 0), self.in_bits(at + 1, 7, 0)])
    }

    /// `emu_core::check_frame` on the received window and length: `check_reason`, 0 to pass.
    fn check_logic(&self) -> Vec<Item> {
        let mut items = vec![Item::comment("Ingress checks (emu_core::check_frame): the drop reason, 0 to pass.")];
        let code = |r: DropReason| dec(8, r as u64);
        // A 16-bit field the frame holds only part of reads 0, as check_frame's `be16` has it
        // (the window's zeros past the end would make a cut `08` read as 0x0800).
        for (name, at) in [("ty0", 12u64), ("ty1", 16), ("ty2", 20)] {
            items.push(Item::wire(name, 16));
            let whole = self.received("len").less_than(dec(16, at + 2)).lnot();
            items.push(Item::assign(id(name), Expr::mux(whole, self.in_be16(at), Expr::zero(16))));
        }
        items.push(Item::wire("tag1", 1));
        items.push(Item::assign(id("tag1"), id("ty0").equals(Expr::hex(16, 0x8100))));
        items.push(Item::wire("tag2", 1));
        items.push(Item::assign(id("tag2"), id("tag1").land(id("ty1").equals(Expr::hex(16, 0x8100)))));
        items.push(Item::wire("ethertype", 16));
        items.push(Item::assign(
            id("ethertype"),
            Expr::mux(id("tag2"), id("ty2"), Expr::mux(id("tag1"), id("ty1"), id("ty0"))),
        ));
        // The IPv4 check at each possible header offset.
        for off in [14u64, 18, 22] {
            let name = format!("ip{off}");
            let hl = format!("{name}_hlen");
            items.push(Item::wire(hl.clone(), 17));
            items.push(Item::assign(
                id(hl.clone()),
                Expr::concat(vec![Expr::zero(11), self.in_bits(off, 3, 0), Expr::zero(2)]),
            ));
            let total = Expr::concat(vec![Expr::zero(1), self.in_be16(off + 2)]);
            let len = Expr::concat(vec![Expr::zero(1), self.received("len")]);
            items.push(Item::wire(name.clone(), 8));
            items.push(Item::assign(
                id(name),
                Expr::mux(
                    len.clone().less_than(dec(17, off + 20)),
                    code(DropReason::Ipv4HeaderLength),
                    Expr::mux(
                        self.in_bits(off, 7, 4).not_equals(dec(4, 4)),
                        code(DropReason::Ipv4Version),
                        Expr::mux(
                            id(hl.clone())
                                .less_than(dec(17, 20))
                                .lor(len.clone().less_than(id(hl.clone()).plus(dec(17, off)))),
                            code(DropReason::Ipv4HeaderLength),
                            Expr::mux(
                                total.clone().less_than(id(hl)).lor(len.less_than(total.plus(dec(17, off)))),
                                code(DropReason::Ipv4TotalLength),
                                Expr::zero(8),
                            ),
                        ),
                    ),
                ),
            ));
        }
        let ipv4 = Expr::mux(id("tag2"), id("ip22"), Expr::mux(id("tag1"), id("ip18"), id("ip14")));
        items.push(Item::wire("check_reason", 8));
        items.push(Item::assign(
            id("check_reason"),
            Expr::mux(
                self.received("over"),
                code(DropReason::Oversize),
                Expr::mux(
                    self.received("len").equals(Expr::zero(16)),
                    code(DropReason::Empty),
                    Expr::mux(
                        self.received("len").less_than(dec(16, 14)),
                        code(DropReason::Runt),
                        Expr::mux(id("ethertype").equals(Expr::hex(16, 0x0800)), ipv4, Expr::zero(8)),
                    ),
                ),
            ),
        ));
        items
    }

    /// A frame word as edited, `wire` = word `idx` of the window's bytes (`held` of them in
    /// register `win`) over the buffer's word `rd` (read a cycle before); bytes past
    /// `min_len` in the window read 0 when the NF sets the length.
    fn edited_word(&self, wire: &str, idx: Expr, held: &WindowBytes, win: &str, rd: &str, min_len: &str) -> Vec<Item> {
        let bus = self.bus;
        let mut items = vec![Item::reg(wire, 8 * bus)];
        let words = (self.win as u64).div_ceil(bus as u64);
        let mut arms = vec![];
        for k in 0..words {
            let lanes: Vec<Expr> = (0..bus)
                .rev()
                .map(|j| {
                    let p = k * bus as u64 + j as u64;
                    let buffered = id(rd).slice(8 * j + 7, 8 * j);
                    if held.holds(p) {
                        held.bits(win, p, 7, 0)
                    } else if p < self.win as u64 && self.sets_len {
                        // Cut off by a shorter length once: it reads 0 even if the length grew back.
                        Expr::mux(dec(16, p).less_than(id(min_len)), buffered, Expr::zero(8))
                    } else {
                        buffered
                    }
                })
                .collect();
            arms.push((vec![dec(self.bw, k)], vec![Stmt::blocking(id(wire), Expr::concat(lanes))]));
        }
        items.push(Item::always_comb(vec![Stmt::Case {
            subject: idx,
            arms,
            default: Some(vec![Stmt::blocking(id(wire), id(rd))]),
        }]));
        items
    }

    /// `frame_word`, what the sum unit adds: the core's frame word `sum_word_q` as edited so
    /// far; `tx_word`, what the egress sends: its frame's word `beat_q`.
    fn frame_word_logic(&self) -> Vec<Item> {
        let mut items = vec![Item::comment("The edited frame, a bus word at a time: window bytes over buffer bytes.")];
        if self.sums {
            items.extend(self.edited_word(
                "frame_word",
                id("sum_word_q"),
                &self.core,
                "win_q",
                "buf_rd_q",
                "min_len_q",
            ));
        }
        items.extend(self.edited_word("tx_word", id("beat_q"), &self.egress, "tx_win_q", "tx_rd_q", "tx_min_len_q"));
        items
    }

    /// The egress's outputs.
    fn egress_logic(&self) -> Vec<Item> {
        let bus = self.bus;
        let lb = self.log2_bus();
        let mut items = vec![Item::comment("Egress: the edited frame with its ports in tuser.")];
        let base = Expr::concat(vec![Expr::zero(16 - self.bw - lb), id("beat_q"), Expr::zero(lb)]);
        items.push(Item::wire("tx_keep", bus));
        let keep: Vec<Expr> =
            (0..bus).rev().map(|j| base.clone().plus(dec(16, j as u64)).less_than(id("tx_len_q"))).collect();
        items.push(Item::assign(id("tx_keep"), Expr::concat(keep)));
        items.push(Item::wire("tx_last", 1));
        items.push(Item::assign(
            id("tx_last"),
            Expr::concat(vec![Expr::zero(1), base.clone()])
                .plus(dec(17, bus as u64))
                .at_least(Expr::concat(vec![Expr::zero(1), id("tx_len_q")])),
        ));
        let lanes: Vec<Expr> = (0..bus)
            .rev()
            .map(|j| Expr::mux(id("tx_keep").bit_at(j), id("tx_word").slice(8 * j + 7, 8 * j), Expr::zero(8)))
            .collect();
        let data = Expr::concat(lanes);
        let data = if self.inband().is_some() {
            Expr::mux(id("tx_reply_q"), debug::reply_word(bus, self.bw), data)
        } else {
            data
        };
        items.push(Item::assign(id("m_axis_tdata"), data));
        items.push(Item::assign(id("m_axis_tkeep"), id("tx_keep")));
        items.push(Item::assign(id("m_axis_tlast"), id("tx_last")));
        items.push(Item::assign(id("m_axis_tvalid"), id("tx_full_q")));
        if !self.d.config.debug {
            // (With the debug unit, the hold buffer drives it.)
            items.push(Item::assign(id("s_axis_tready"), id("in_full_q").lnot()));
        }
        let one_hot = |bits: [Expr; 4]| {
            let mut parts = vec![];
            for b in bits.into_iter().rev() {
                parts.push(Expr::zero(1));
                parts.push(b);
            }
            Expr::concat(parts)
        };
        let src = one_hot([0u64, 1, 2, 3].map(|k| id("tx_port_q").equals(dec(8, k))));
        let dst = one_hot([0u32, 1, 2, 3].map(|k| id("tx_dst_q").bit_at(k)));
        items.push(Item::assign(id("m_axis_tuser"), Expr::concat(vec![Expr::zero(96), dst, src, id("tx_len_q")])));
        items
    }

    /// The sum unit; gives its items and, per sum state, the statements of its case arm
    /// (which end by calling the state's continuation, filled in by `state_logic`).
    #[allow(clippy::type_complexity)]
    fn sum_logic(&self) -> Result<(Vec<Item>, HashMap<StateNo, (Value, Expr, Expr)>), String> {
        let d = self.d;
        let f = &d.func;
        let bus = self.bus;
        let lb = self.log2_bus();
        let mut items =
            vec![Item::comment("The sum unit: a one's-complement sum over a byte range, a bus word per cycle.")];
        let mut per_state = HashMap::new();
        let mut start_arms = vec![];
        for (n, st) in d.sched.states.iter().enumerate() {
            if st.kind != FsmKind::Sum {
                continue;
            }
            let inst = st.insts[0];
            let Op::OnesSum(scope, a, b) = f.insts[inst].op else { return Err("a sum state without its sum".into()) };
            let start = Self::sat(self.opnd(a, n), self.width(a));
            let end = Self::sat(self.opnd(b, n), self.width(b));
            let len = Expr::concat(vec![Expr::zero(1), id("len_q")]);
            let limit = match scope {
                SumScope::Frame => len,
                SumScope::Window => {
                    Expr::mux(len.clone().less_than(dec(POS, self.win as u64)), len, dec(POS, self.win as u64))
                }
            };
            let hi = Expr::mux(end.clone().less_than(limit.clone()), end, limit);
            start_arms.push((
                vec![self.codes.nf(n)],
                vec![Stmt::blocking(id("sum_start"), start.clone()), Stmt::blocking(id("sum_hi"), hi.clone())],
            ));
            per_state.insert(n, (f.results(inst)[0], start, hi));
        }
        // No sums, no sum unit: its registers stay at their reset values, and its datapath
        // over a range held at constants would be dead logic that Verilator warns about.
        if start_arms.is_empty() {
            return Ok((items, per_state));
        }
        items.push(Item::reg("sum_start", POS));
        items.push(Item::reg("sum_hi", POS));
        let mut sel =
            vec![Stmt::blocking(id("sum_start"), Expr::zero(POS)), Stmt::blocking(id("sum_hi"), Expr::zero(POS))];
        sel.push(Stmt::Case { subject: id("fsm_q"), arms: start_arms, default: Some(vec![]) });
        items.push(Item::always_comb(sel));
        // Each lane's contribution (a lane's position has its parity: the words are aligned).
        let base = Expr::concat(vec![Expr::zero(POS - self.bw - lb), id("sum_word_q"), Expr::zero(lb)]);
        let mut terms = vec![];
        for j in 0..bus {
            let p = format!("sum_p{j}");
            items.push(Item::wire(p.clone(), POS));
            items.push(Item::assign(id(p.clone()), base.clone().plus(dec(POS, j as u64))));
            let byte = id("frame_word").slice(8 * j + 7, 8 * j);
            let c = format!("sum_c{j}");
            items.push(Item::wire(c.clone(), 32));
            items.push(Item::assign(
                id(c.clone()),
                Self::sum_term(id(p), j % 2 == 1, &id("sum_start"), &id("sum_hi"), byte),
            ));
            terms.push(id(c));
        }
        items.push(Item::wire("sum_next", 32));
        items.push(Item::assign(id("sum_next"), terms.into_iter().fold(id("sum_acc_q"), |acc, t| acc.plus(t))));
        items.extend(Self::fold_wires("sum_fold", id("sum_next"), 32));
        items.push(Item::wire("sum_start_word", POS));
        items.push(Item::assign(
            id("sum_start_word"),
            id("sum_start").binary(crate::verilog::BinOp::Shr, Expr::int(lb as u64)),
        ));
        items.push(Item::wire("sum_last_word", POS));
        items.push(Item::assign(
            id("sum_last_word"),
            id("sum_hi").minus(dec(POS, 1)).binary(crate::verilog::BinOp::Shr, Expr::int(lb as u64)),
        ));
        // The core's read address in the buffer (declared with the buffer): the sum unit's next word.
        let sum_addr = Expr::mux(
            id("sum_busy_q"),
            id("sum_word_q").plus(dec(self.bw, 1)),
            id("sum_start_word").slice(self.bw - 1, 0),
        );
        let mut rd = vec![Stmt::blocking(id("rd_addr"), Expr::zero(self.bw))];
        let mut sum_states: Vec<StateNo> = per_state.keys().copied().collect();
        sum_states.sort_unstable(); // the same Verilog on every run
        for n in sum_states {
            rd.push(Stmt::if_(
                id("fsm_q").equals(self.codes.nf(n)),
                vec![Stmt::blocking(id("rd_addr"), sum_addr.clone())],
            ));
        }
        rd.push(Stmt::if_(
            id("rd_addr").at_least(dec(self.bw, self.depth)),
            vec![Stmt::blocking(id("rd_addr"), dec(self.bw, self.depth - 1))],
        ));
        items.push(Item::always_comb(rd));
        Ok((items, per_state))
    }

    /// Wires folding `x` (of width `w`) end-around to 16 bits, the last one named `name`.
    fn fold_wires(name: &str, x: Expr, w: u32) -> Vec<Item> {
        let mut items = vec![];
        if w <= 16 {
            items.push(Item::wire(name, 16));
            items.push(Item::assign(id(name), if w == 16 { x } else { Expr::concat(vec![Expr::zero(16 - w), x]) }));
            return items;
        }
        // Rounds until the largest possible value fits 16 bits.
        let mut bound: u128 = if w >= 128 { u128::MAX } else { (1u128 << w) - 1 };
        let mut cur = x;
        let mut round = 0;
        while bound > 0xffff {
            let r = format!("{name}_{round}");
            items.push(Item::wire(r.clone(), w));
            let hi = cur.clone().binary(crate::verilog::BinOp::Shr, Expr::int(16));
            let lo = Expr::concat(vec![Expr::zero(w - 16), cur.slice(15, 0)]);
            items.push(Item::assign(id(r.clone()), lo.plus(hi)));
            // The largest `lo + hi` over values up to the bound: the bound itself, or the
            // value just below its top part with all low bits set.
            let (h, l) = (bound >> 16, bound & 0xffff);
            bound = (l + h).max(if h > 0 { 0xffff + h - 1 } else { 0 });
            cur = id(r);
            round += 1;
        }
        items.push(Item::wire(name, 16));
        items.push(Item::assign(id(name), cur.slice(15, 0)));
        items
    }

    /// The Verilog of state `n`: its wires, and the statements of its case arm.
    fn state_logic(
        &self,
        n: StateNo,
        sums: &HashMap<StateNo, (Value, Expr, Expr)>,
    ) -> Result<(Vec<Item>, Vec<Stmt>), String> {
        let d = self.d;
        let f = &d.func;
        let st = &d.sched.states[n];
        let mut items = vec![];
        let mut body = vec![];
        for &i in &st.insts {
            let op = &f.insts[i].op;
            if st.kind == FsmKind::Sum {
                break;
            }
            let (wires, stmts) = self.inst_logic(i, n)?;
            items.extend(wires);
            body.extend(stmts);
            for &r in f.results(i) {
                if self.registered.contains(&r) && !(matches!(op, Op::State(..)) && latency(f, op) >= 1) {
                    body.push(self.register_set(r, id(r.to_string()), self.width(r)));
                }
            }
        }
        let advance = if st.ends_block { self.terminator_logic(n)? } else { self.goto(n, n + 1) };
        if st.kind == FsmKind::Sum {
            let (result, _, _) = sums.get(&n).ok_or("a sum state without its sum")?;
            let mut finish =
                vec![self.register_set(*result, id("sum_fold"), 16), Stmt::nb(id("sum_busy_q"), Expr::bit(false))];
            finish.extend(advance.clone());
            let mut empty = vec![self.register_clear(*result)];
            empty.extend(advance);
            body = vec![Stmt::if_else(
                id("sum_busy_q").lnot(),
                vec![Stmt::if_else(
                    id("sum_hi").less_than(id("sum_start")).lor(id("sum_hi").equals(id("sum_start"))),
                    empty,
                    vec![
                        Stmt::nb(id("sum_busy_q"), Expr::bit(true)),
                        Stmt::nb(id("sum_acc_q"), Expr::zero(32)),
                        Stmt::nb(id("sum_word_q"), id("sum_start_word").slice(self.bw - 1, 0)),
                    ],
                )],
                vec![Stmt::if_else(
                    Expr::concat(vec![Expr::zero(POS - self.bw), id("sum_word_q")]).equals(id("sum_last_word")),
                    finish,
                    vec![
                        Stmt::nb(id("sum_word_q"), id("sum_word_q").plus(dec(self.bw, 1))),
                        Stmt::nb(id("sum_acc_q"), id("sum_next")),
                    ],
                )],
            )];
        } else {
            body.extend(advance);
        }
        Ok((items, body))
    }

    /// The expression of an [`Op::is_logic`] `op` over its operands as `o` names them:
    /// the core's values in a state, or the ingress's copies of a streamed sum's range.
    fn pure_expr(&self, op: &Op, o: &dyn Fn(Value) -> Expr) -> Expr {
        match op {
            Op::Const(c) => lit(c),
            Op::Unary(UnaryOp::Not, a) => o(*a).inv(),
            Op::Unary(UnaryOp::Neg, a) => Expr::zero(self.width(*a)).minus(o(*a)),
            Op::Binary(b, x, y) => {
                let w = self.width(*x);
                let e = match b {
                    BinaryOp::Add => o(*x).plus(o(*y)),
                    BinaryOp::Sub => o(*x).minus(o(*y)),
                    // By a power of two: a shift (yosys finds that too, but the Verilog reads
                    // as what it is and no tool has to).
                    BinaryOp::Mul => match (self.power_of_two(*x), self.power_of_two(*y)) {
                        (_, Some(k)) => o(*x).binary(crate::verilog::BinOp::Shl, Expr::int(k)),
                        (Some(k), _) => o(*y).binary(crate::verilog::BinOp::Shl, Expr::int(k)),
                        _ => o(*x).binary(crate::verilog::BinOp::Mul, o(*y)),
                    },
                    BinaryOp::And => o(*x).and(o(*y)),
                    BinaryOp::Or => o(*x).or(o(*y)),
                    BinaryOp::Xor => o(*x).xor(o(*y)),
                    BinaryOp::Shl => o(*x).binary(crate::verilog::BinOp::Shl, o(*y)),
                    BinaryOp::Lshr => o(*x).binary(crate::verilog::BinOp::Shr, o(*y)),
                    BinaryOp::Ashr => {
                        let ones = lit(&BitVec::ones(w as u16));
                        let fill = ones.binary(crate::verilog::BinOp::Shr, o(*y)).inv();
                        o(*x).binary(crate::verilog::BinOp::Shr, o(*y)).or(Expr::mux(
                            o(*x).bit_at(w - 1),
                            fill,
                            Expr::zero(w),
                        ))
                    }
                };
                e
            }
            Op::Cmp(c, x, y) => {
                let w = self.width(*x);
                let flip = |e: Expr| {
                    let top = BitVec::new(w as u16, 0).or(&BitVec::ones(w as u16).lshr(w as u64 - 1).shl(w as u64 - 1));
                    e.xor(lit(&top))
                };
                let (a, b) = match c {
                    CmpOp::Slt | CmpOp::Sle | CmpOp::Sgt | CmpOp::Sge => (flip(o(*x)), flip(o(*y))),
                    _ => (o(*x), o(*y)),
                };
                let e = match c {
                    CmpOp::Eq => a.equals(b),
                    CmpOp::Ne => a.not_equals(b),
                    CmpOp::Ult | CmpOp::Slt => a.less_than(b),
                    CmpOp::Ule | CmpOp::Sle => a.binary(crate::verilog::BinOp::Le, b),
                    CmpOp::Ugt | CmpOp::Sgt => a.binary(crate::verilog::BinOp::Gt, b),
                    CmpOp::Uge | CmpOp::Sge => a.at_least(b),
                };
                e
            }
            Op::Cast(c, a, w) => {
                let (aw, w) = (self.width(*a), *w as u32);
                let e = match c {
                    _ if aw == w => o(*a),
                    CastOp::Zext => Expr::concat(vec![Expr::zero(w - aw), o(*a)]),
                    CastOp::Sext => Expr::concat(vec![o(*a).bit_at(aw - 1).repeat(w - aw), o(*a)]),
                    CastOp::Trunc => o(*a).slice(w - 1, 0),
                };
                e
            }
            Op::Select(c, a, b) => Expr::mux(o(*c), o(*a), o(*b)),
            Op::Slice(a, lo, w) => {
                let (lo, w) = (*lo as u32, *w as u32);
                let e = if lo == 0 && w == self.width(*a) { o(*a) } else { o(*a).slice(lo + w - 1, lo) };
                e
            }
            Op::Concat(hi, lo) => Expr::concat(vec![o(*hi), o(*lo)]),
            _ => unreachable!("not a pure operation: {op:?}"),
        }
    }

    /// The wires an instruction defines and the statements it runs at the end of its state.
    fn inst_logic(&self, i: Inst, n: StateNo) -> Result<(Vec<Item>, Vec<Stmt>), String> {
        let f = &self.d.func;
        let op = &f.insts[i].op;
        let o = |v: Value| self.opnd(v, n);
        let results = f.results(i);
        let mut items = vec![];
        let mut stmts = vec![];
        let define = |items: &mut Vec<Item>, e: Expr| {
            let r = results[0];
            items.push(Item::wire(r.to_string(), self.width(r)));
            items.push(Item::assign(id(r.to_string()), e));
        };
        match op {
            Op::Const(_)
            | Op::Unary(..)
            | Op::Binary(..)
            | Op::Cmp(..)
            | Op::Cast(..)
            | Op::Select(..)
            | Op::Slice(..)
            | Op::Concat(..) => define(&mut items, self.pure_expr(op, &o)),
            Op::CsumFold(a) => {
                let r = results[0];
                let name = format!("{r}_fold");
                items.extend(Self::fold_wires(&name, o(*a), self.width(*a)));
                define(&mut items, id(name));
            }
            Op::PktLen => define(&mut items, id("len_q")),
            Op::Meta(MetaField::InPort) => define(&mut items, id("in_port_q")),
            Op::Meta(MetaField::Len) => define(&mut items, id("rx_len_q")),
            Op::Meta(MetaField::Timestamp) => define(&mut items, id("ts_q")),
            Op::PktRead(addr, bytes) => {
                let e =
                    match addr.base {
                        None => Expr::concat((0..*bytes as u64).map(|k| self.wbyte(addr.offset as u64 + k)).collect()),
                        Some(base) => {
                            debug_assert!(self.core.all(), "a computed position needs the whole window");
                            let a = self.address(&mut items, i, base, addr.offset, n);
                            let sh = match self.read_port.get(&i) {
                                Some(k) => format!("rdwin{k}_sh"),
                                None => {
                                    let sh = format!("{i}_sh");
                                    items.extend(self.window_shifter(&sh, a));
                                    sh
                                }
                            };
                            Expr::concat(
                                (0..*bytes as u32)
                                    .map(|k| {
                                        if k < self.win {
                                            id(sh.clone()).slice(8 * k + 7, 8 * k)
                                        } else {
                                            Expr::zero(8)
                                        }
                                    })
                                    .collect(),
                            )
                        }
                    };
                define(&mut items, e);
            }
            Op::PktWrite(addr, v) => {
                let bytes = self.width(*v) / 8;
                let byte = |k: u32| o(*v).slice(8 * (bytes - 1 - k) + 7, 8 * (bytes - 1 - k));
                match addr.base {
                    None => {
                        for k in 0..bytes {
                            let p = addr.offset as u64 + k as u64;
                            if p < self.win as u64 {
                                stmts.push(Stmt::if_(
                                    dec(16, p).less_than(id("len_q")),
                                    vec![Stmt::nb(self.wbyte(p), byte(k))],
                                ));
                            }
                        }
                    }
                    Some(base) => {
                        debug_assert!(self.core.all(), "a computed position needs the whole window");
                        let a = self.address(&mut items, i, base, addr.offset, n);
                        for k in 0..bytes {
                            let name = format!("{i}_a{k}");
                            items.push(Item::wire(name.clone(), ADDR));
                            items.push(Item::assign(id(name.clone()), a.clone().plus(dec(ADDR, k as u64))));
                            let ak = id(name);
                            let len = Expr::concat(vec![Expr::zero(ADDR - 16), id("len_q")]);
                            let en = ak.clone().less_than(len).land(ak.clone().less_than(dec(ADDR, self.win as u64)));
                            let pos = ak.slice(index_width(self.win as u64) - 1, 0);
                            if self.write_port.contains_key(&(i, k)) {
                                let w = index_width(self.win as u64);
                                for (what, e, w) in [("en", en, 1), ("pos", pos, w), ("byte", byte(k), 8)] {
                                    let name = format!("{i}_w{k}_{what}");
                                    items.push(Item::wire(name.clone(), w));
                                    items.push(Item::assign(id(name), e));
                                }
                            } else {
                                stmts.push(Stmt::if_(en, vec![self.window_byte_write(pos, byte(k))]));
                            }
                        }
                    }
                }
            }
            Op::PktSetLen(v) => {
                let name = format!("{i}_len");
                let want = Self::sat(o(*v), self.width(*v));
                let len = Expr::concat(vec![Expr::zero(1), id("len_q")]);
                let win = dec(POS, self.win as u64);
                let cap = Expr::mux(len.clone().less_than(win.clone()), win, len.clone());
                items.push(Item::wire(name.clone(), POS));
                items.push(Item::assign(
                    id(name.clone()),
                    Expr::mux(
                        want.clone().binary(crate::verilog::BinOp::Le, len),
                        want.clone(),
                        Expr::mux(want.clone().less_than(cap.clone()), want, cap),
                    ),
                ));
                stmts.push(Stmt::nb(id("len_q"), id(name.clone()).slice(15, 0)));
                stmts.push(Stmt::if_(
                    id(name.clone()).slice(15, 0).less_than(id("min_len_q")),
                    vec![Stmt::nb(id("min_len_q"), id(name.clone()).slice(15, 0))],
                ));
                for p in (0..self.win as u64).filter(|&p| self.core.holds(p)) {
                    stmts.push(Stmt::if_(
                        dec(POS, p).at_least(id(name.clone())),
                        vec![Stmt::nb(self.wbyte(p), Expr::zero(8))],
                    ));
                }
            }
            Op::OnesSum(..) => {
                // Streamed: the ingress's sum of the frame's bytes came with it.
                let k = self.d.sched.streamed_index(i).ok_or("a sum outside a sum state")?;
                let name = format!("{}_fold", results[0]);
                items.extend(Self::fold_wires(&name, id(format!("ss{k}_q")), 32));
                define(&mut items, Expr::concat(vec![Expr::zero(16), id(name)]));
            }
            Op::State(s, sop) => {
                // Requests are driven by `element_requests`; here only the combinational reads.
                if latency(f, op) == 0 && !results.is_empty() {
                    let port = match sop {
                        StateOp::QueueIsEmpty => "empty",
                        StateOp::QueueIsFull => "full",
                        StateOp::QueueLen => "len",
                        _ => "value",
                    };
                    let e = id(format!("st_{}_{port}", self.elem[s]));
                    // The status port may be wider than the value (a queue's `len` is 32 bits).
                    let (pw, w) = (self.element_port_width(*s, port), self.width(results[0]));
                    define(&mut items, if pw > w { e.slice(w - 1, 0) } else { e });
                }
            }
        }
        Ok((items, stmts))
    }

    /// A computed packet address `sat(base) + offset`, [`ADDR`] bits, as a wire.
    fn address(&self, items: &mut Vec<Item>, i: Inst, base: Value, offset: u32, n: StateNo) -> Expr {
        let name = format!("{i}_addr");
        let b = Self::sat(self.opnd(base, n), self.width(base));
        items.push(Item::wire(name.clone(), ADDR));
        items.push(Item::assign(
            id(name.clone()),
            Expr::concat(vec![Expr::zero(ADDR - POS), b]).plus(dec(ADDR, offset as u64)),
        ));
        id(name)
    }

    /// The posted effects state `n` issues ([`crate::sched::posted`]), each with the condition
    /// under which its terminator takes the way to it.
    fn posted_at(&self, n: StateNo) -> Vec<(Inst, Expr)> {
        let st = &self.d.sched.states[n];
        let mut out = vec![];
        if st.ends_block {
            self.posted_on(self.d.func.terminator(st.block), Expr::bit(true), n, &mut out);
        }
        out
    }

    fn posted_on(&self, term: &Terminator, cond: Expr, n: StateNo, out: &mut Vec<(Inst, Expr)>) {
        let f = &self.d.func;
        let visit = |call: &crate::ir::BlockCall, c: Expr, out: &mut Vec<(Inst, Expr)>| {
            if self.d.sched.inlined.contains(&call.block) {
                out.extend(f.blocks[call.block].insts.iter().map(|&i| (i, c.clone())));
                self.posted_on(f.terminator(call.block), c, n, out);
            }
        };
        match term {
            Terminator::Jump(c) => visit(c, cond, out),
            Terminator::Branch(v, t, e) => {
                let v = self.opnd(*v, n);
                visit(t, cond.clone().land(v.clone()), out);
                visit(e, cond.land(v.lnot()), out);
            }
            Terminator::Return(_) => {}
        }
    }

    /// The statements deciding state `n`'s block's terminator.
    fn terminator_logic(&self, n: StateNo) -> Result<Vec<Stmt>, String> {
        Ok(self.decide(self.d.func.terminator(self.d.sched.states[n].block), n))
    }

    /// The statements deciding `term` at the end of state `n`: through the inlined blocks it
    /// jumps to, to a verdict or the first state of a block.
    fn decide(&self, term: &Terminator, n: StateNo) -> Vec<Stmt> {
        let f = &self.d.func;
        let go = |call: &crate::ir::BlockCall| -> Vec<Stmt> {
            if let Some(a) = self.d.sched.inlined_return(f, call) {
                return self.verdict(&a, n);
            }
            if self.d.sched.inlined.contains(&call.block) {
                return self.decide(f.terminator(call.block), n);
            }
            let target = &f.blocks[call.block];
            let mut s: Vec<Stmt> = target
                .params
                .iter()
                .zip(&call.args)
                .map(|(p, a)| self.register_set(*p, self.opnd(*a, n), self.width(*p)))
                .collect();
            s.extend(self.goto(n, self.d.sched.block_start[&call.block]));
            s
        };
        match term {
            Terminator::Jump(c) => go(c),
            Terminator::Branch(c, t, e) => vec![Stmt::if_else(self.opnd(*c, n), go(t), go(e))],
            Terminator::Return(a) => self.verdict(a, n),
        }
    }

    /// A drop decided with `reason`: the core keeps it until the egress shows it, in order with
    /// the frames before.
    fn decided_drop(&self, reason: Expr) -> Vec<Stmt> {
        vec![
            Stmt::nb(id("done_drop_q"), Expr::bit(true)),
            Stmt::nb(id("done_reason_q"), reason),
            Stmt::nb(id("fsm_q"), self.codes.code(StateCodes::DONE)),
        ]
    }

    /// `Action::resolve` of a `return`: the output ports, or a drop, for the egress.
    fn verdict(&self, a: &ActionExpr, n: StateNo) -> Vec<Stmt> {
        let ports = self.d.config.ports as u32;
        let all = dec(4, (1u64 << ports) - 1);
        let in_bit = Expr::concat((0..4u64).rev().map(|k| id("in_port_q").equals(dec(8, k))).collect());
        let drop = |r: DropReason| self.decided_drop(dec(8, r as u64));
        let send = |mask: Expr, empty: DropReason| {
            vec![Stmt::if_else(
                mask.clone().equals(Expr::zero(4)),
                drop(empty),
                vec![
                    Stmt::nb(id("dst_q"), mask),
                    Stmt::nb(id("done_drop_q"), Expr::bit(false)),
                    Stmt::nb(id("fsm_q"), self.codes.code(StateCodes::DONE)),
                ],
            )]
        };
        match a {
            ActionExpr::Drop(r) => drop(*r),
            ActionExpr::Flood => send(all.and(in_bit.inv()), DropReason::NoOtherPort),
            ActionExpr::Reply => send(all.and(in_bit), DropReason::NoSuchPort),
            ActionExpr::Forward(p) => {
                let port = self.opnd(*p, n);
                let bit = Expr::concat((0..4u64).rev().map(|k| port.clone().equals(dec(8, k))).collect());
                send(all.and(bit), DropReason::NoSuchPort)
            }
            ActionExpr::Multicast(m) => send(all.and(self.opnd(*m, n).slice(3, 0)), DropReason::NoSuchPort),
        }
    }

    /// Result `k` of state-element instruction `i` on the element's response ports.
    fn response(&self, i: Inst, k: usize) -> Result<Expr, String> {
        let f = &self.d.func;
        let Op::State(s, sop) = &f.insts[i].op else { return Err("not a state op".into()) };
        let e = format!("st_{}", self.elem[s]);
        let port = |p: &str| id(format!("{e}_{p}"));
        Ok(match (sop, k) {
            (
                StateOp::CamGet(_)
                | StateOp::CamRemove(_)
                | StateOp::CamContains(_)
                | StateOp::LruGet(_)
                | StateOp::LruPeek(_)
                | StateOp::LruRemove(_)
                | StateOp::LruContains(_)
                | StateOp::HashGet(_)
                | StateOp::HashRemove(_)
                | StateOp::HashContains(_),
                0,
            ) => port("resp_hit"),
            (
                StateOp::CamGet(_)
                | StateOp::CamRemove(_)
                | StateOp::LruGet(_)
                | StateOp::LruPeek(_)
                | StateOp::LruRemove(_)
                | StateOp::HashGet(_)
                | StateOp::HashRemove(_),
                1,
            ) => port("resp_value"),
            (StateOp::CamInsert(..) | StateOp::LruInsert(..) | StateOp::HashInsert(..), 0) => port("resp_evicted"),
            (StateOp::CamInsert(..) | StateOp::LruInsert(..) | StateOp::HashInsert(..), 1) => port("resp_evicted_key"),
            (StateOp::CamInsert(..) | StateOp::LruInsert(..) | StateOp::HashInsert(..), 2) => port("resp_value"),
            (StateOp::ArrayGet(_), 0) => port("resp_data"),
            (StateOp::ArraySet(..) | StateOp::TcamSet(..) | StateOp::QueuePush(_), 0) => port("resp_ok"),
            (StateOp::TcamLookup(_) | StateOp::TcamLookupSlot(_), 0) => port("resp_hit"),
            (StateOp::TcamLookup(_), 1) => port("resp_result"),
            (StateOp::TcamLookupSlot(_), 1) => port("resp_slot"),
            (StateOp::QueuePop | StateOp::QueuePeek, 0) => port("resp_ok"),
            (StateOp::QueuePop | StateOp::QueuePeek, 1) => port("resp_data"),
            _ => return Err(format!("{} has no result {k} in hardware", sop.name())),
        })
    }

    /// The request ports of every state element, driven by the state the FSM is in.
    fn element_requests(&self) -> Result<Vec<Item>, String> {
        let d = self.d;
        let f = &d.func;
        let mut items = vec![Item::comment("State elements: requests by FSM state, and the instances.")];
        let symbols = if d.config.debug { self.debug_symbols() } else { vec![] };
        for (s, decl) in f.states.iter() {
            let e = format!("st_{}", self.elem[&s]);
            let p = |name: &str| format!("{e}_{name}");
            // The instance's ports are the element module's own (clock and reset aside): a reg
            // per request input, driven below, and a wire per response output.
            let ports: Vec<Port> =
                self.element_module(s).ports.into_iter().filter(|p| p.name != "clock" && p.name != "reset").collect();
            let keyed_ahead = self.preload.values().flatten().any(|&(e, _)| e == s);
            if keyed_ahead {
                items.push(Item::reg(format!("{e}_key_q"), self.element_port_width(s, "req_key")));
            }
            let mut defaults = vec![];
            for port in &ports {
                if port.dir == Dir::Input {
                    items.push(Item::reg(p(&port.name), port.width));
                    // Without a request the key is a don't-care: the key register there
                    // leaves the comparators no multiplexer when every key is loaded ahead.
                    let idle = if keyed_ahead && port.name == "req_key" {
                        id(format!("{e}_key_q"))
                    } else if port.name == "dbg_slot" {
                        id(debug::INDEX).slice(port.width - 1, 0)
                    } else if let Some(e) =
                        debug::table_write_port(s.as_u32() as usize, &port.name, port.width, &symbols)
                    {
                        e
                    } else {
                        Expr::zero(port.width)
                    };
                    defaults.push(Stmt::blocking(id(p(&port.name)), idle));
                } else {
                    items.push(Item::wire(p(&port.name), port.width));
                }
            }
            let mut arms = vec![];
            for (n, st) in d.sched.states.iter().enumerate() {
                // The state's own accesses, then the posted effects it issues on the way its
                // terminator takes (one access to the element at most: the scheduler sees to it).
                let own = st.insts.iter().map(|&i| (i, None));
                let mut arm = vec![];
                for (i, on) in own.chain(self.posted_at(n).into_iter().map(|(i, c)| (i, Some(c)))) {
                    let Op::State(id_, sop) = &f.insts[i].op else { continue };
                    if *id_ != s {
                        continue;
                    }
                    let o = |v: Value| self.opnd(v, n);
                    let set = |name: &str, e: Expr| Stmt::blocking(id(p(name)), e);
                    let fit = |v: Value, w: u32| debug::fit(o(v), self.width(v), w);
                    let body = match (&decl.kind, sop) {
                        (StateKind::Counter { bits }, StateOp::CounterInc) => {
                            vec![set("req_valid", Expr::bit(true)), set("req_data", dec(*bits as u32, 1))]
                        }
                        (StateKind::Counter { bits }, StateOp::CounterAdd(v)) => {
                            vec![set("req_valid", Expr::bit(true)), set("req_data", fit(*v, *bits as u32))]
                        }
                        (StateKind::Counter { bits }, StateOp::CounterSet(v)) => vec![
                            set("req_valid", Expr::bit(true)),
                            set("req_op", Expr::bit(true)),
                            set("req_data", fit(*v, *bits as u32)),
                        ],
                        (StateKind::Array { ty, size }, StateOp::ArrayGet(i) | StateOp::ArraySet(i, _)) => {
                            let bits = self.array_index_bits(*size);
                            let mut b = vec![
                                set("req_valid", Expr::bit(true)),
                                set("req_index", Self::saturate(o(*i), self.width(*i), bits)),
                            ];
                            if let StateOp::ArraySet(_, v) = sop {
                                b.push(set("req_write", Expr::bit(true)));
                                b.push(set("req_data", fit(*v, ty.width() as u32)));
                            }
                            b
                        }
                        (StateKind::Register { ty }, StateOp::RegSet(v)) => {
                            vec![set("write", Expr::bit(true)), set("write_data", fit(*v, ty.width() as u32))]
                        }
                        (StateKind::Cam { key, value, .. } | StateKind::Lru { key, value, .. }, op) => {
                            // Op codes: hw::Cam's and hw::Lru's OP_* (a contains is a peek: it
                            // must not make the entry the most recent).
                            let (code, k, v) = match op {
                                StateOp::CamGet(k) | StateOp::CamContains(k) | StateOp::LruGet(k) => {
                                    (0, Some(*k), None)
                                }
                                StateOp::CamInsert(k, v) | StateOp::LruInsert(k, v) => (1, Some(*k), Some(*v)),
                                StateOp::CamRemove(k) | StateOp::LruRemove(k) => (2, Some(*k), None),
                                StateOp::LruPeek(k) | StateOp::LruContains(k) => (3, Some(*k), None),
                                _ => return Err(format!("{} on {}", op.name(), decl.kind.with_article())),
                            };
                            let mut b = vec![set("req_valid", Expr::bit(true)), set("req_op", dec(2, code))];
                            if let Some(k) = k {
                                b.push(set("req_key", fit(k, key.width() as u32)));
                            }
                            if let Some(v) = v {
                                b.push(set("req_value", fit(v, value.width() as u32)));
                            }
                            b
                        }
                        (StateKind::HashTable { key, value, .. }, op) => {
                            // Op codes: hw::HashTable's OP_* (a contains is a get: a hash
                            // table keeps no order a get would change).
                            let (code, k, v) = match op {
                                StateOp::HashGet(k) | StateOp::HashContains(k) => (0, *k, None),
                                StateOp::HashInsert(k, v) => (1, *k, Some(*v)),
                                StateOp::HashRemove(k) => (2, *k, None),
                                _ => return Err(format!("{} on {}", op.name(), decl.kind.with_article())),
                            };
                            let mut b = vec![
                                set("req_valid", Expr::bit(true)),
                                set("req_op", dec(2, code)),
                                set("req_key", fit(k, key.width() as u32)),
                            ];
                            if let Some(v) = v {
                                b.push(set("req_value", fit(v, value.width() as u32)));
                            }
                            b
                        }
                        (StateKind::Tcam { key, value, size }, op) => {
                            // Op codes: hw::Tcam's OP_*. For a slot past the table (which the
                            // slot port may not be wide enough to name) the request is a
                            // lookup (3): it changes nothing and answers "not written".
                            let slot = |i: Value| {
                                let bits = self.array_index_bits(*size);
                                let at = Self::saturate(o(i), self.width(i), bits);
                                let s = index_width(*size as u64);
                                (at.clone().less_than(dec(bits, *size as u64)), at.slice(s - 1, 0))
                            };
                            match op {
                                StateOp::TcamLookup(k) | StateOp::TcamLookupSlot(k) => vec![
                                    set("req_valid", Expr::bit(true)),
                                    set("req_op", dec(2, 0)),
                                    set("req_key", fit(*k, key.width() as u32)),
                                ],
                                StateOp::TcamSet(i, v, m, r) => {
                                    let (inside, at) = slot(*i);
                                    vec![
                                        set("req_valid", Expr::bit(true)),
                                        set("req_op", Expr::mux(inside, dec(2, 1), dec(2, 3))),
                                        set("req_slot", at),
                                        set("req_key", fit(*v, key.width() as u32)),
                                        set("req_mask", fit(*m, key.width() as u32)),
                                        set("req_result", fit(*r, value.width() as u32)),
                                    ]
                                }
                                StateOp::TcamClear(i) => {
                                    let (inside, at) = slot(*i);
                                    vec![
                                        set("req_valid", Expr::bit(true)),
                                        set("req_op", Expr::mux(inside, dec(2, 2), dec(2, 3))),
                                        set("req_slot", at),
                                    ]
                                }
                                _ => return Err(format!("{} on {}", op.name(), decl.kind.with_article())),
                            }
                        }
                        (StateKind::Queue { ty, .. }, op) => {
                            // Op codes: hw::Queue's OP_*; the status reads need no request.
                            let code = match op {
                                StateOp::QueuePeek => 0,
                                StateOp::QueuePush(_) => 1,
                                StateOp::QueuePop => 2,
                                StateOp::QueueIsEmpty | StateOp::QueueIsFull | StateOp::QueueLen => continue,
                                _ => return Err(format!("{} on {}", op.name(), decl.kind.with_article())),
                            };
                            let mut b = vec![set("req_valid", Expr::bit(true)), set("req_op", dec(2, code))];
                            if let StateOp::QueuePush(v) = op {
                                b.push(set("req_data", fit(*v, ty.width() as u32)));
                            }
                            b
                        }
                        _ => vec![], // reads of registers and counters need no request
                    };
                    // A key loaded ahead comes from its register (see `preloads`).
                    let ahead = self.preload.get(&n).is_some_and(|l| l.iter().any(|&(e, _)| e == s));
                    let body: Vec<Stmt> = body
                        .into_iter()
                        .map(|st| match st {
                            Stmt::Blocking(l, _) if ahead && l == id(p("req_key")) => {
                                Stmt::Blocking(l, id(format!("{e}_key_q")))
                            }
                            st => st,
                        })
                        .collect();
                    match on {
                        None => arm.extend(body),
                        Some(c) if !body.is_empty() => arm.push(Stmt::if_(c, body)),
                        Some(_) => {}
                    }
                }
                if !arm.is_empty() {
                    arms.push((vec![self.codes.nf(n)], arm));
                }
            }
            if !arms.is_empty() {
                defaults.push(Stmt::Case { subject: id("fsm_q"), arms, default: Some(vec![]) });
            }
            // The debugger writes only while the core is idle, when no state above requests.
            if self.d.config.debug {
                let n = s.as_u32() as usize;
                if let Some(w) = symbols.get(n).and_then(|s| debug::element_write(s, &symbols)) {
                    defaults.push(w);
                }
            }
            items.push(Item::always_comb(defaults));
            let mut connections = vec![("clock".to_string(), id("axis_aclk")), ("reset".to_string(), id("rst"))];
            for port in &ports {
                connections.push((port.name.clone(), id(p(&port.name))));
            }
            items.push(Item::Instance(Instance {
                module: self.element_module_name(s),
                name: e,
                params: vec![],
                connections,
            }));
        }
        Ok(items)
    }

    /// The state elements and probes as the debug unit sees them, by number.
    fn debug_symbols(&self) -> Vec<debug::Symbol> {
        self.d
            .func
            .states
            .iter()
            .enumerate()
            .map(|(n, (s, decl))| {
                let (width, counter) = match &decl.kind {
                    StateKind::Register { ty } => (Some(ty.width() as u32), false),
                    StateKind::Counter { bits } => (Some(*bits as u32), true),
                    _ => (None, false),
                };
                let table = match &decl.kind {
                    StateKind::Cam { key, value, .. }
                    | StateKind::Lru { key, value, .. }
                    | StateKind::HashTable { key, value, .. } => {
                        // A table in sets is read through its RAM's second port, by way: only
                        // with ways a power of two.
                        let ways = match &decl.kind {
                            StateKind::HashTable { ways, .. } | StateKind::Lru { ways, .. } if decl.kind.in_sets() => {
                                *ways
                            }
                            _ => 0,
                        };
                        (ways == 0 || ways.is_power_of_two()).then(|| debug::Table {
                            key: key.width() as u32,
                            value: value.width() as u32,
                            mask: false,
                            writable: true,
                            slot_bits: 0,
                            ways,
                        })
                    }
                    StateKind::Tcam { key, value, size } => Some(debug::Table {
                        key: key.width() as u32,
                        value: value.width() as u32,
                        mask: true,
                        writable: true,
                        slot_bits: index_width(*size as u64),
                        ways: 0,
                    }),
                    // A queue's place k from the front: its value alone (no key).
                    StateKind::Queue { ty, .. } => Some(debug::Table {
                        key: 0,
                        value: ty.width() as u32,
                        mask: false,
                        writable: false,
                        slot_bits: 0,
                        ways: 0,
                    }),
                    _ => None,
                };
                let array = match &decl.kind {
                    StateKind::Array { ty, size } => Some((ty.width() as u32, self.array_index_bits(*size))),
                    _ => None,
                };
                debug::Symbol {
                    n,
                    prefix: format!("st_{}", self.elem[&s]),
                    width,
                    counter,
                    writable: decl.role != StateRole::Probe,
                    table,
                    array,
                }
            })
            .collect()
    }

    /// The width of port `port` of element `s`'s module.
    fn element_port_width(&self, s: StateId, port: &str) -> u32 {
        self.element_module(s).ports.iter().find(|p| p.name == port).map_or(0, |p| p.width)
    }

    fn element_module_name(&self, s: StateId) -> String {
        format!("{}_{}", self.d.top_name(), self.elem[&s])
    }

    fn element_modules(&self) -> Vec<Module> {
        self.d.func.states.keys().map(|s| self.element_module(s)).collect()
    }

    /// The module of state element `s`, with the NF's widths (and a register's configured
    /// value).
    fn element_module(&self, s: StateId) -> Module {
        let mut m = self.element_module_plain(s);
        // With the debug unit, tables in registers get a read port for it.
        if self.d.config.debug {
            match &self.d.func.states[s].kind {
                StateKind::Cam { key, value, size } | StateKind::Lru { key, value, size, .. }
                    if !self.d.func.states[s].kind.in_sets() =>
                {
                    let (k, v) = (key.width() as u32, value.width() as u32);
                    let fields = [("key", "slot_key", k), ("value", "slot_value", v)];
                    hw::add_debug_read(&mut m, *size as u64, "slot_valid", &fields);
                    if matches!(self.d.func.states[s].kind, StateKind::Cam { .. }) {
                        hw::add_debug_write(&mut m, *size as u64, "slot_valid", &fields);
                    } else {
                        // An LRU's write moves its ages as the CPU's does.
                        hw::add_lru_debug_write(&mut m, k, v, *size as u64);
                    }
                }
                StateKind::Tcam { key, value, size } => {
                    let (k, v) = (key.width() as u32, value.width() as u32);
                    let fields = [("key", "rule_value", k), ("mask", "rule_mask", k), ("value", "rule_result", v)];
                    // Writes go through its own set/clear request (debug::element_write).
                    hw::add_debug_read(&mut m, *size as u64, "rule_valid", &fields);
                }
                StateKind::HashTable { key, value, size, ways } | StateKind::Lru { key, value, size, ways } => {
                    let (k, v, n, ways) = (key.width() as u32, value.width() as u32, *size as u64, *ways as u64);
                    let policy = match self.d.func.states[s].kind {
                        StateKind::Lru { .. } => hw::Replacement::Lru,
                        _ => hw::Replacement::RoundRobin,
                    };
                    if hw::add_hash_debug_read(&mut m, k, v, n, ways, policy) {
                        hw::add_hash_debug_write(&mut m, k, v, n, ways, policy);
                    }
                }
                StateKind::Queue { ty, size } => hw::add_queue_debug_read(&mut m, ty.width() as u32, *size as u64),
                _ => {}
            }
        }
        m
    }

    /// [`Gen::element_module`] without the debugger's port.
    fn element_module_plain(&self, s: StateId) -> Module {
        let name = self.element_module_name(s);
        match &self.d.func.states[s].kind {
            StateKind::Counter { bits } => hw::counter_module(&name, *bits as u32),
            StateKind::Register { ty } => {
                let init = self.d.initial.registers[s.as_u32() as usize].unwrap_or(BitVec::zero(ty.width()));
                hw::register_module(
                    &name,
                    ty.width() as u32,
                    &Literal::from_limbs(ty.width() as u32, init.words().to_vec(), Radix::Hex),
                )
            }
            StateKind::Cam { key, value, size } => {
                let entries: Vec<hw::LoadedEntry> = (self.d.initial.cam_entries.iter().filter(|e| e.table == s))
                    .map(|e| (lit(&e.key), lit(&e.value)))
                    .collect();
                hw::cam_module_loaded(&name, key.width() as u32, value.width() as u32, *size as u64, &entries)
            }
            StateKind::Array { ty, size } => {
                let words: Vec<hw::LoadedWord> =
                    self.d.initial.words_of(s).map(|w| (w.index as u64, lit(&w.value))).collect();
                hw::array_module_loaded(&name, ty.width() as u32, *size as u64, self.array_index_bits(*size), &words)
            }
            StateKind::Lru { key, value, size, ways } if ways == size => {
                hw::lru_module(&name, key.width() as u32, value.width() as u32, *size as u64)
            }
            StateKind::Lru { key, value, size, ways } => {
                hw::lru_sets_module(&name, key.width() as u32, value.width() as u32, *size as u64, *ways as u64)
            }
            StateKind::HashTable { key, value, size, ways } => {
                hw::hash_table_module(&name, key.width() as u32, value.width() as u32, *size as u64, *ways as u64)
            }
            StateKind::Tcam { key, value, size } => {
                let rules: Vec<hw::LoadedRule> = (self.d.initial.rules.iter().filter(|r| r.table == s))
                    .map(|r| (r.slot as u64, lit(&r.value), lit(&r.mask), lit(&r.result)))
                    .collect();
                hw::tcam_module_loaded(&name, key.width() as u32, value.width() as u32, *size as u64, &rules)
            }
            StateKind::Queue { ty, size } => hw::queue_module(&name, ty.width() as u32, *size as u64),
        }
    }
}
