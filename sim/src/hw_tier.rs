//! The hardware tiers (`cycle`, and `verilator` when its model is built): the NF's generated
//! hardware driven beat by beat through the NetFPGA SUME stream ports, wrapped as a
//! [`NetworkFunction`] so the CPU target's runner, devices and drop records drive it like the
//! other tiers. The runner hands it the whole frame ([`NetworkFunction::process_frame`]); what
//! comes out of the hardware (ports, bytes, drop reason) becomes the verdict, and each frame's
//! latency in cycles is kept for the report.

use emu_core::{Action, Meta, NetworkFunction, Packet, PortMask};
use emu_hls::backend::model::{CycleModel, Driver, Outcome, Pacing};
use emu_hls::backend::top::Clocked;
use emu_hls::backend::Design;

/// An NF as hardware.
pub struct HwNf {
    driver: Driver<Box<dyn Clocked + Send>>,
    /// Why the hardware could not give a verdict for some frame (a hang), first one.
    pub error: Option<String>,
    /// Bytes of the frames given to the hardware.
    pub bytes_in: u64,
    /// Frames given to the hardware so far.
    pub frames_in: u64,
    /// Which frames (numbered as they reach the hardware, from 0) a waveform records.
    pub record: Option<std::ops::Range<u64>>,
    /// Per output port: the cycle each frame sent there left the hardware.
    pub sent_at: Vec<Vec<u64>>,
    /// The frames given to the hardware and what became of each, kept for a back-to-back
    /// replay ([`HwNf::back_to_back`]) when set.
    pub kept: Option<Vec<(Vec<u8>, u8, u64, Outcome)>>,
}

/// The frames of a run fed again back to back, as fast as the hardware takes them, into a
/// sink that is always ready: the interval on the user's own traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct BackToBack {
    /// Frames fed.
    pub frames: usize,
    /// Clock cycles from the first beat in to the last beat out (or the last drop).
    pub cycles: u64,
}

impl HwNf {
    /// The cycle tier: the cycle-accurate model of `design`.
    pub fn cycle(design: &Design) -> HwNf {
        HwNf::new(Box::new(CycleModel::new(design)), design.config.bus_bytes)
    }

    /// Any clocked hardware with a bus of `bus_bytes`, fed frame by frame and never stalled.
    pub fn new(hw: Box<dyn Clocked + Send>, bus_bytes: usize) -> HwNf {
        HwNf {
            driver: Driver::new(hw, bus_bytes, Pacing::FULL),
            error: None,
            bytes_in: 0,
            frames_in: 0,
            record: None,
            sent_at: vec![vec![]; 32],
            kept: None,
        }
    }

    /// Feeds the frames this tier was given (kept since `kept` was set) back to back into
    /// `fresh`, the same hardware just after reset, with the sink always ready. Each frame must
    /// come out as it did one at a time; the error names the first that does not.
    pub fn back_to_back(&self, fresh: Box<dyn Clocked + Send>) -> Result<BackToBack, String> {
        let kept = self.kept.as_deref().unwrap_or_default();
        let mut driver = Driver::new(fresh, self.driver.bus_bytes(), Pacing::FULL);
        let out = driver
            .run_timed(kept.iter().map(|(f, p, t, _)| (f.as_slice(), *p, *t)))
            .map_err(|h| format!("back to back, the hardware hung (no progress since cycle {})", h.last_progress))?;
        for (i, (got, (.., want))) in out.iter().zip(kept).enumerate() {
            if got != want {
                return Err(format!(
                    "back to back, frame {i} came out otherwise than fed one at a time: {got:?}, not {want:?}"
                ));
            }
        }
        Ok(BackToBack { frames: kept.len(), cycles: driver.cycles })
    }

    /// Each frame's cycles from its first beat in to its last beat out (or its drop).
    pub fn latencies(&self) -> &[u64] {
        &self.driver.latencies
    }

    /// Clock cycles run so far.
    pub fn cycles(&self) -> u64 {
        self.driver.cycles
    }

    /// The cycle-accurate model, when this is the cycle tier (for its profile figures).
    pub fn model(&self) -> Option<&emu_hls::backend::model::CycleModel> {
        self.driver.hw.model()
    }

    fn run(&mut self, frame: &mut Vec<u8>, meta: &Meta) -> Action {
        self.bytes_in += frame.len() as u64;
        if let Some(r) = &self.record {
            let on = r.contains(&self.frames_in);
            self.driver.hw.set_recording(on);
        }
        self.frames_in += 1;
        // On a drop the frame stays as it came in (the hardware reports only the reason).
        let input = (frame.as_slice(), meta.in_port, meta.timestamp);
        let result = self.driver.run_timed(std::iter::once(input));
        if let (Some(kept), Ok(out)) = (&mut self.kept, &result) {
            kept.extend(out.last().map(|o| (frame.clone(), meta.in_port, meta.timestamp, o.clone())));
        }
        match result {
            Ok(mut out) => match out.pop() {
                Some(Outcome::Sent(mask, bytes)) => {
                    let at = self.driver.finished.last().copied().unwrap_or(0);
                    for port in (0..32).filter(|p| mask & (1 << p) != 0) {
                        self.sent_at[port].push(at);
                    }
                    *frame = bytes;
                    Action::Multicast(PortMask(mask))
                }
                Some(Outcome::Dropped(reason)) => Action::Drop(reason),
                None => unreachable!("the driver returns one outcome per frame"),
            },
            Err(hang) => {
                let e = format!("the hardware hung (no progress since cycle {})", hang.last_progress);
                self.error.get_or_insert(e);
                Action::Drop(emu_core::DropReason::Malformed)
            }
        }
    }
}

impl NetworkFunction for HwNf {
    /// Only the window is visible here, so the hardware gets the window's bytes; runners call
    /// [`process_frame`](NetworkFunction::process_frame) with the whole frame.
    fn process(&mut self, pkt: &mut Packet<'_>, meta: &Meta) -> Action {
        let mut frame = pkt.window().to_vec();
        let action = self.run(&mut frame, meta);
        pkt.set_len(frame.len());
        for (i, b) in frame.iter().enumerate() {
            pkt.set_byte(i, *b);
        }
        action
    }

    fn process_frame(&mut self, frame: &mut Vec<u8>, _window: usize, meta: &Meta) -> Action {
        self.run(frame, meta)
    }
}

/// Latency and throughput figures of a hardware tier's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Frames that went through.
    pub frames: usize,
    /// Smallest, median and largest latency in cycles.
    pub latency_cycles: (u64, u64, u64),
    /// Mean cycles per frame, the frames fed one at a time (the runner hands over one, waits
    /// for its verdict): latency more than throughput; `emu hls`'s report has the
    /// back-to-back interval.
    pub cycles_per_frame: f64,
    /// The clock the figures in time assume.
    pub clock_mhz: f64,
    /// With a back-to-back replay: its cycles per frame.
    pub back_to_back: Option<f64>,
    /// Frames per second at that clock, in millions.
    pub mpps: f64,
    /// Bits per second of the frames' bytes at that rate, in Gbit/s, and the 4×10G line rate's
    /// share of it (1.0: line rate).
    pub gbps: f64,
}

impl Report {
    /// The figures of `nf`'s run at `clock_mhz`.
    pub fn of(nf: &HwNf, clock_mhz: f64) -> Option<Report> {
        let mut l = nf.latencies().to_vec();
        if l.is_empty() {
            return None;
        }
        l.sort_unstable();
        let cycles_per_frame = nf.cycles() as f64 / l.len() as f64;
        let mpps = clock_mhz / cycles_per_frame;
        let mean_bytes = nf.bytes_in as f64 / l.len() as f64;
        Some(Report {
            frames: l.len(),
            latency_cycles: (l[0], l[l.len() / 2], l[l.len() - 1]),
            cycles_per_frame,
            clock_mhz,
            back_to_back: None,
            mpps,
            gbps: mpps * mean_bytes * 8.0 / 1000.0,
        })
    }

    /// The report with a back-to-back replay's figures.
    pub fn with_back_to_back(mut self, b: &BackToBack) -> Report {
        self.back_to_back = Some(b.cycles as f64 / b.frames.max(1) as f64);
        self
    }

    /// The report as a small text table.
    pub fn table(&self, tier: &str) -> String {
        let ns = |c: u64| c as f64 * 1000.0 / self.clock_mhz;
        let (lo, med, hi) = self.latency_cycles;
        let b2b = self.back_to_back.map_or(String::new(), |c| {
            let mpps = self.clock_mhz / c;
            format!(
                "  back to back {c:.2} cycles per frame, {mpps:.2} Mpps ({:.2}x the {:.2} Mpps of 4x10G at 64 bytes)\n",
                mpps / emu_hls::backend::report::LINE_RATE_MPPS_64,
                emu_hls::backend::report::LINE_RATE_MPPS_64
            )
        });
        let table = format!(
            "tier {tier}: {} frames at {} MHz\n\
             \x20 latency    min {lo} / median {med} / max {hi} cycles ({:.1} / {:.1} / {:.1} ns)\n\
             \x20 interval   {:.2} cycles per frame (fed one at a time; --back-to-back replays them back to back)\n\
             \x20 throughput {:.2} Mpps, {:.2} Gbit/s ({:.1}% of 4x10G)\n",
            self.frames,
            self.clock_mhz,
            ns(lo),
            ns(med),
            ns(hi),
            self.cycles_per_frame,
            self.mpps,
            self.gbps,
            100.0 * self.gbps / 40.0
        );
        table + &b2b
    }

    /// The report as JSON.
    pub fn json(&self, tier: &str) -> String {
        let (lo, med, hi) = self.latency_cycles;
        format!(
            "{{\"tier\":\"{tier}\",\"frames\":{},\"clock_mhz\":{},\"latency_cycles\":{{\"min\":{lo},\"median\":{med},\"max\":{hi}}},\"cycles_per_frame\":{:.3},\"back_to_back_cycles_per_frame\":{},\"mpps\":{:.3},\"gbps\":{:.3}}}",
            self.frames,
            self.clock_mhz,
            self.cycles_per_frame,
            self.back_to_back.map_or("null".to_string(), |c| format!("{c:.3}")),
            self.mpps,
            self.gbps
        )
    }
}
