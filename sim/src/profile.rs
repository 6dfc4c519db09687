//! Profiles of a run (`emu run --profile`, `emu sim --profile`): per-packet latency, cycles per
//! FSM state, table hit rates and queue occupancy, as a terminal table, JSON and plots
//! ([`crate::plot`]).
//!
//! [`Profiled`] wraps the NF a runner drives and records per packet; [`ProfileHandle`] turns
//! what it recorded into a [`Profile`] once the run is over. Where the figures come from:
//!
//! | tier | latency | tables, queues | FSM states |
//! |---|---|---|---|
//! | cpu | ns of the NF's `process_frame` | the NF's IR stepped beside it on the same frames | — |
//! | ir | ns of the interpreter's run | the interpreter's state | — |
//! | cycle | cycles, first beat in to verdict | the model's state | the model's FSM |
//! | verilator | cycles, first beat in to verdict | — | — |
//!
//! Table hits and misses are counted where lookups are interpreted (`emu_hls::interp`), so the
//! native NF pays nothing for them, with profiling on or off, and the ir and cycle tiers count
//! the same operations. On the cpu tier the IR beside the NF is checked frame by frame against
//! it (verdict and bytes); frames where they disagree are counted in the profile, since then
//! the table figures are the IR's and not the NF's.

use crate::hw_tier::HwNf;
use crate::ir_tier::IrNf;
use emu_core::{Action, Meta, NetworkFunction, Packet};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Bins of a latency histogram, at most (values with fewer distinct values get one each).
pub const BINS: usize = 30;
/// Points of the latency CDF, at most.
pub const CDF_POINTS: usize = 100;

/// A profile of one tier's run.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    /// The tier (`cpu`, `ir`, `cycle`, `verilator`).
    pub tier: String,
    /// Frames the NF was given (the runner's ingress checks drop some before).
    pub frames: u64,
    /// Per-frame latency.
    pub latency: Latency,
    /// Cycles per FSM state (the cycle tier).
    pub states: Option<StateCycles>,
    /// Lookups per table, in declaration order; empty when the tier cannot count them.
    pub tables: Vec<TableCount>,
    /// Occupancy per queue, sampled after each frame.
    pub queues: Vec<QueueOccupancy>,
    /// Where the table and queue figures come from, or why there are none.
    pub state_source: String,
    /// cpu tier: frames where the IR beside the NF gave another verdict or other bytes.
    pub ir_disagreements: u64,
}

/// A latency distribution.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    /// `ns` or `cycles`.
    pub unit: String,
    /// Frames measured.
    pub count: u64,
    /// Smallest.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Histogram: bins in increasing order, counts summing to `count`.
    pub histogram: Vec<Bin>,
    /// The CDF at up to [`CDF_POINTS`] points: (latency, share of frames at most that).
    pub cdf: Vec<(u64, f64)>,
}

/// One histogram bin: latencies in `lo..=hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bin {
    /// Lowest latency in the bin.
    pub lo: u64,
    /// Highest latency in the bin.
    pub hi: u64,
    /// Frames in it.
    pub count: u64,
}

/// Where the hardware's clock edges went.
#[derive(Debug, Clone, Serialize)]
pub struct StateCycles {
    /// Per FSM state (`state N (blockK)`, as `emu hls`'s report.md lists them), then `idle`
    /// (no frame in the core: waiting, or the ingress checks) and `send` (egress beats): name
    /// and cycles.
    pub states: Vec<(String, u64)>,
    /// All the cycles of the run (the states' sum).
    pub total: u64,
}

/// Lookups of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableCount {
    /// The state element's field name.
    pub name: String,
    /// Lookups that found the key.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
}

/// How full one queue was after each frame.
#[derive(Debug, Clone, Serialize)]
pub struct QueueOccupancy {
    /// The state element's field name.
    pub name: String,
    /// Largest length seen.
    pub max: u64,
    /// Mean length.
    pub mean: f64,
    /// Frames after which the queue held `i` values, index `i`.
    pub histogram: Vec<u64>,
}

/// What [`Profiled`] wraps.
enum Subject {
    /// The NF itself, and its IR beside it for the table and queue figures.
    Native(Box<dyn NetworkFunction + Send>, Option<Arc<Mutex<IrNf>>>),
    /// The ir tier.
    Ir(Arc<Mutex<IrNf>>),
    /// A hardware tier.
    Hw(Arc<Mutex<HwNf>>),
}

/// Per-packet figures, shared between the wrapper (in the runner) and the handle.
#[derive(Default)]
struct Recorder {
    frames: u64,
    ns: Counts,
    /// Per queue: name, and frames seen at each length.
    queues: Vec<(String, Vec<u64>)>,
    disagreements: u64,
}

impl Recorder {
    fn sample_queues(&mut self, lens: Vec<(&str, usize)>) {
        if self.queues.is_empty() {
            self.queues = lens.iter().map(|(n, _)| (n.to_string(), Vec::new())).collect();
        }
        for ((_, hist), (_, len)) in self.queues.iter_mut().zip(lens) {
            if hist.len() <= len {
                hist.resize(len + 1, 0);
            }
            hist[len] += 1;
        }
    }
}

/// An NF that records a profile as a runner drives it.
pub struct Profiled {
    subject: Subject,
    rec: Arc<Mutex<Recorder>>,
}

/// The way to a [`Profiled`]'s figures after the run.
pub struct ProfileHandle {
    rec: Arc<Mutex<Recorder>>,
    ir: Option<Arc<Mutex<IrNf>>>,
    hw: Option<Arc<Mutex<HwNf>>>,
    source: String,
}

impl Profiled {
    /// The NF itself (the cpu tier), with its IR beside it (or why there is none).
    pub fn native(nf: Box<dyn NetworkFunction + Send>, ir: Result<IrNf, String>) -> (Profiled, ProfileHandle) {
        let (ir, source) = match ir {
            Ok(i) => {
                (Some(Arc::new(Mutex::new(i))), "counted by the NF's IR, run beside it on the same frames".to_string())
            }
            Err(e) => (None, format!("not counted: {e}")),
        };
        Profiled::make(Subject::Native(nf, ir.clone()), ir, None, source)
    }

    /// The ir tier.
    pub fn ir(ir: IrNf) -> (Profiled, ProfileHandle) {
        let ir = Arc::new(Mutex::new(ir));
        Profiled::make(Subject::Ir(ir.clone()), Some(ir), None, "counted by the IR interpreter".into())
    }

    /// A hardware tier; the cycle model gives tables, queues and states, Verilator latency only.
    pub fn hw(hw: Arc<Mutex<HwNf>>) -> (Profiled, ProfileHandle) {
        let source = match hw.lock().map(|h| h.model().is_some()) {
            Ok(true) => "counted by the cycle model",
            _ => "not counted: the Verilator model's state is not visible to the simulator",
        };
        Profiled::make(Subject::Hw(hw.clone()), None, Some(hw), source.into())
    }

    fn make(
        subject: Subject,
        ir: Option<Arc<Mutex<IrNf>>>,
        hw: Option<Arc<Mutex<HwNf>>>,
        source: String,
    ) -> (Profiled, ProfileHandle) {
        let rec = Arc::new(Mutex::new(Recorder::default()));
        (Profiled { subject, rec: rec.clone() }, ProfileHandle { rec, ir, hw, source })
    }
}

impl NetworkFunction for Profiled {
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> Action {
        let mut frame = pkt.window().to_vec();
        let window = frame.len();
        let action = self.process_frame(&mut frame, window, meta);
        pkt.set_len(frame.len());
        for (i, b) in frame.iter().enumerate() {
            pkt.set_byte(i, *b);
        }
        action
    }

    fn process_frame(&mut self, frame: &mut Vec<u8>, window: usize, meta: &Meta) -> Action {
        let mut rec = self.rec.lock().expect("the profile recorder");
        rec.frames += 1;
        match &mut self.subject {
            Subject::Native(nf, ir) => {
                let copy = ir.as_ref().map(|_| frame.clone());
                let t0 = Instant::now();
                let action = nf.process_frame(frame, window, meta);
                rec.ns.add(t0.elapsed().as_nanos() as u64);
                if let (Some(ir), Some(mut copy)) = (ir, copy) {
                    let mut ir = ir.lock().expect("the IR beside the NF");
                    let theirs = ir.process_frame(&mut copy, window, meta);
                    let resolve = |a: Action| a.resolve(meta.in_port, emu_core::MAX_PORTS);
                    if resolve(theirs) != resolve(action) || copy != *frame {
                        rec.disagreements += 1;
                    }
                    rec.sample_queues(ir.state().queue_lens());
                }
                action
            }
            Subject::Ir(ir) => {
                let mut ir = ir.lock().expect("the ir tier");
                let t0 = Instant::now();
                let action = ir.process_frame(frame, window, meta);
                rec.ns.add(t0.elapsed().as_nanos() as u64);
                rec.sample_queues(ir.state().queue_lens());
                action
            }
            Subject::Hw(hw) => {
                let mut hw = hw.lock().expect("the hardware tier");
                let action = hw.process_frame(frame, window, meta);
                if let Some(m) = hw.model() {
                    rec.sample_queues(m.state().queue_lens());
                }
                action
            }
        }
    }

    fn summary(&self) -> String {
        match &self.subject {
            Subject::Native(nf, _) => nf.summary(),
            _ => String::new(),
        }
    }

    fn elements(&mut self) -> Vec<(&'static str, &mut dyn emu_core::state::Element)> {
        match &mut self.subject {
            Subject::Native(nf, _) => nf.elements(),
            _ => Vec::new(),
        }
    }

    fn probes(&self) -> Option<&'static std::thread::LocalKey<emu_core::probe::Probes>> {
        match &self.subject {
            Subject::Native(nf, _) => nf.probes(),
            _ => None,
        }
    }
}

impl ProfileHandle {
    /// The profile of the run so far, as tier `tier`.
    pub fn profile(&self, tier: &str) -> Profile {
        let rec = self.rec.lock().expect("the profile recorder");
        let hw = self.hw.as_ref().map(|h| h.lock().expect("the hardware tier"));
        let (latency, states, tables) = match &hw {
            Some(hw) => {
                let states = hw.model().map(|m| {
                    let cycles = m.state_cycles();
                    let n = cycles.len() - 2;
                    let blocks = &m.design().sched.states;
                    let mut states: Vec<(String, u64)> =
                        (0..n).map(|i| (format!("state {i} ({})", blocks[i].block), cycles[i])).collect();
                    states.push(("idle".into(), cycles[n]));
                    states.push(("send".into(), cycles[n + 1]));
                    StateCycles { states, total: cycles.iter().sum() }
                });
                let tables = hw.model().map(|m| table_counts(m.state())).unwrap_or_default();
                (Latency::of_values("cycles", hw.latencies()), states, tables)
            }
            None => {
                let tables =
                    self.ir.as_ref().map(|i| table_counts(i.lock().expect("the IR").state())).unwrap_or_default();
                (Latency::of("ns", &rec.ns), None, tables)
            }
        };
        let queues = rec
            .queues
            .iter()
            .map(|(name, hist)| {
                let n: u64 = hist.iter().sum();
                let total: u64 = hist.iter().enumerate().map(|(len, c)| len as u64 * c).sum();
                QueueOccupancy {
                    name: name.clone(),
                    max: hist.iter().rposition(|&c| c > 0).unwrap_or(0) as u64,
                    mean: if n == 0 { 0.0 } else { total as f64 / n as f64 },
                    histogram: hist.clone(),
                }
            })
            .collect();
        Profile {
            tier: tier.to_string(),
            frames: rec.frames,
            latency,
            states,
            tables,
            queues,
            state_source: self.source.clone(),
            ir_disagreements: rec.disagreements,
        }
    }
}

fn table_counts(state: &emu_hls::interp::State) -> Vec<TableCount> {
    state
        .lookup_counts()
        .into_iter()
        .map(|(name, hits, misses)| TableCount { name: name.to_string(), hits, misses })
        .collect()
}

/// Significant bits a latency keeps in [`Counts`]: values below 2^10 exactly, larger ones to
/// within 0.1%.
const SIGNIFICANT_BITS: u32 = 10;

/// Latencies counted by value, larger values rounded down to [`SIGNIFICANT_BITS`], so a long
/// live run's profile stays a few kilobytes however many frames it sees.
#[derive(Debug, Clone, Default)]
pub struct Counts(BTreeMap<u64, u64>);

impl Counts {
    /// Counts one latency.
    pub fn add(&mut self, v: u64) {
        let bits = 64 - v.leading_zeros();
        let v = if bits <= SIGNIFICANT_BITS { v } else { v >> (bits - SIGNIFICANT_BITS) << (bits - SIGNIFICANT_BITS) };
        *self.0.entry(v).or_insert(0) += 1;
    }

    /// Latencies so far.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The latency at `rank` (1 = the smallest).
    fn at_rank(&self, rank: u64) -> u64 {
        let mut seen = 0;
        for (&v, &c) in &self.0 {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        self.0.keys().next_back().copied().unwrap_or(0)
    }
}

impl Latency {
    /// The distribution of `counts`, in `unit`.
    pub fn of(unit: &str, counts: &Counts) -> Latency {
        let n = counts.total();
        if n == 0 {
            return Latency { unit: unit.into(), ..Latency::default() };
        }
        let at = |q: f64| counts.at_rank(((q * n as f64).ceil() as u64).clamp(1, n));
        let points = n.min(CDF_POINTS as u64);
        let cdf = (1..=points)
            .map(|k| {
                let rank = (k * n).div_ceil(points);
                (counts.at_rank(rank), rank as f64 / n as f64)
            })
            .collect();
        let sum: f64 = counts.0.iter().map(|(&v, &c)| v as f64 * c as f64).sum();
        Latency {
            unit: unit.into(),
            count: n,
            min: at(0.0),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: at(1.0),
            mean: sum / n as f64,
            histogram: histogram(counts, at(0.99)),
            cdf,
        }
    }

    /// The distribution of `values`, in `unit`.
    pub fn of_values(unit: &str, values: &[u64]) -> Latency {
        let mut counts = Counts::default();
        for &v in values {
            counts.add(v);
        }
        Latency::of(unit, &counts)
    }
}

/// Bins over `counts`: one per distinct value when there are at most [`BINS`], else [`BINS`]
/// equal bins from the smallest to `top` (the 99th percentile, so one outlier does not squash
/// the rest) and one more for whatever lies above it.
fn histogram(counts: &Counts, top: u64) -> Vec<Bin> {
    let c = &counts.0;
    if c.len() <= BINS {
        return c.iter().map(|(&v, &n)| Bin { lo: v, hi: v, count: n }).collect();
    }
    let lo = *c.keys().next().expect("values");
    let max = *c.keys().next_back().expect("values");
    let width = ((top - lo) / BINS as u64).max(1);
    let mut bins: Vec<Bin> = (0..BINS as u64)
        .map(|k| Bin { lo: lo + k * width, hi: lo + (k + 1) * width - 1, count: 0 })
        .take_while(|b| b.lo <= top)
        .collect();
    let last = bins.len() - 1;
    bins[last].hi = top;
    if max > top {
        bins.push(Bin { lo: top + 1, hi: max, count: 0 });
    }
    for (&v, &n) in c {
        let k = bins.partition_point(|b| b.hi < v);
        bins[k].count += n;
    }
    bins
}

impl Profile {
    /// The profile as a table for the terminal.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let l = &self.latency;
        let _ = writeln!(s, "profile of tier {}: {} frames", self.tier, self.frames);
        if l.count > 0 {
            let _ = writeln!(
                s,
                "  latency ({}): min {} / p50 {} / p90 {} / p99 {} / max {}, mean {:.1}",
                l.unit, l.min, l.p50, l.p90, l.p99, l.max, l.mean
            );
        }
        if let Some(st) = &self.states {
            let _ = writeln!(s, "  {:<24} {:>12} {:>8}", "FSM state", "cycles", "share");
            for (name, c) in &st.states {
                let share = if st.total == 0 { 0.0 } else { 100.0 * *c as f64 / st.total as f64 };
                let _ = writeln!(s, "  {name:<24} {c:>12} {share:>7.1}%");
            }
            let _ = writeln!(s, "  {:<24} {:>12}", "total", st.total);
        }
        if !self.tables.is_empty() {
            let _ =
                writeln!(s, "  {:<24} {:>10} {:>10} {:>10} {:>9}", "table", "lookups", "hits", "misses", "hit rate");
            for t in &self.tables {
                let n = t.hits + t.misses;
                let rate = if n == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * t.hits as f64 / n as f64) };
                let _ = writeln!(s, "  {:<24} {n:>10} {:>10} {:>10} {rate:>9}", t.name, t.hits, t.misses);
            }
        }
        for q in &self.queues {
            let _ = writeln!(s, "  queue {}: max {}, mean {:.2} after each frame", q.name, q.max, q.mean);
        }
        let _ = writeln!(s, "  tables and queues: {}", self.state_source);
        if self.ir_disagreements > 0 {
            let _ = writeln!(
                s,
                "  warning: on {} frames the IR gave another verdict or other bytes than the NF \
                 (`emu sim --target cpu,ir` shows where); its table figures are the IR's",
                self.ir_disagreements
            );
        }
        s
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use emu_hls::backend::{Design, HwConfig};

    /// A frame of emu-hls/tests/nf/rules_and_pool.rs: operation `op`, key `k`, value `v`,
    /// mask `mask`.
    fn op(op: u8, k: u16, v: u8, mask: u16) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&[0x90, 0x00]);
        f[14] = op;
        f[15..17].copy_from_slice(&k.to_be_bytes());
        f[17] = v;
        f[18..20].copy_from_slice(&mask.to_be_bytes());
        f
    }

    /// The ir and cycle tiers count the same lookups and see the same queue lengths, and
    /// those are what the traffic makes them; the cycle tier's states add up to its cycles.
    #[test]
    fn ir_and_cycle_tiers_profile_the_same_tables_and_queues() {
        let source = include_str!("../../emu-hls/tests/nf/rules_and_pool.rs");
        let func = emu_hls::compile(source, 64).unwrap_or_else(|e| panic!("{e}"));
        let design = Design::new(func.clone(), HwConfig::new(64)).unwrap();
        // A rule for 0x1234; three lookups of it (ops 4, 5, 6: value, value, slot), two of
        // 0x9999 (ops 4 and 15: the rule-decides arm), then the pool: three pushes, one more
        // when full, two pops.
        let mut frames = vec![op(0, 0x1234, 0, 0xffff)];
        frames.extend([op(4, 0x1234, 0, 0), op(5, 0x1234, 0, 0), op(6, 0x1234, 0, 0)]);
        frames.extend([op(4, 0x9999, 0, 0), op(15, 0x9999, 0, 0)]);
        frames.extend((0..4).map(|i| op(7, 100 + i, 0, 0)));
        frames.extend([op(9, 0, 0, 0), op(9, 0, 0, 0)]);
        let hw = Arc::new(Mutex::new(HwNf::cycle(&design)));
        let tiers = [Profiled::ir(IrNf::new(func)), Profiled::hw(hw.clone())];
        let mut profiles = Vec::new();
        for (mut nf, handle) in tiers {
            for f in &frames {
                let meta = Meta { in_port: 0, len: f.len() as u16, timestamp: 0 };
                nf.process_frame(&mut f.clone(), 64, &meta);
            }
            profiles.push(handle.profile("t"));
        }
        for p in &profiles {
            assert_eq!(p.frames, frames.len() as u64);
            assert_eq!(p.latency.count, frames.len() as u64);
            assert_eq!(p.tables, vec![TableCount { name: "rules".into(), hits: 3, misses: 2 }]);
            let q = &p.queues[0];
            assert_eq!(q.name, "pool");
            // Lengths after each frame: 0 six times, then 1, 2, 3, 3, 2, 1.
            assert_eq!(q.histogram, vec![6, 2, 2, 2]);
            assert_eq!(q.max, 3);
        }
        let states = profiles[1].states.as_ref().expect("the cycle tier's states");
        let cycles = hw.lock().unwrap().cycles();
        assert_eq!(states.total, cycles);
        assert_eq!(states.states.iter().map(|(_, c)| c).sum::<u64>(), cycles);
        assert_eq!(states.states.len(), design.sched.states.len() + 2);
        assert!(profiles[0].states.is_none());
    }

    #[test]
    fn latency_figures_and_bins_add_up() {
        let few: Vec<u64> = [5, 3, 3, 9, 5, 5].to_vec();
        let l = Latency::of_values("cycles", &few);
        assert_eq!((l.min, l.p50, l.max, l.count), (3, 5, 9, 6));
        assert_eq!(
            l.histogram,
            vec![Bin { lo: 3, hi: 3, count: 2 }, Bin { lo: 5, hi: 5, count: 3 }, Bin { lo: 9, hi: 9, count: 1 }]
        );
        assert_eq!(l.cdf.len(), 6);
        assert_eq!(l.cdf.last(), Some(&(9, 1.0)));

        let many: Vec<u64> = (0..1000).map(|i| 100 + (i * 7919 % 1000)).chain([1_000_000]).collect();
        let l = Latency::of_values("ns", &many);
        assert_eq!(l.histogram.iter().map(|b| b.count).sum::<u64>(), 1001);
        assert!(l.histogram.len() <= BINS + 1);
        // The outlier has its own bin, kept to 10 significant bits (within 0.1%).
        assert_eq!(l.histogram.last().map(|b| b.hi), Some(999_424));
        assert_eq!((l.min, l.max), (100, 999_424));
        assert!(l.histogram.windows(2).all(|w| w[0].hi < w[1].lo), "bins do not overlap");
        assert_eq!(l.cdf.len(), CDF_POINTS);
        assert!(l.cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        assert_eq!(Latency::of_values("ns", &[]).count, 0);
    }
}
