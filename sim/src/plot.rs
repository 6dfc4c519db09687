//! A profile's plots as SVG (the `svg` crate: no fonts or system libraries needed; the text
//! is left to the viewer): the latency histogram, the latency CDF, and cycles per FSM state.
//!
//! Each bar is a `<rect class="bar">` and each CDF point a vertex of the one
//! `<polyline class="cdf">`, so a test can count them.

use crate::profile::Profile;
use svg::node::element::{Line, Polyline, Rectangle, Text, Title};
use svg::Document;

const W: f64 = 720.0;
const H: f64 = 360.0;
/// Margins: left (axis labels), right, top (title), bottom (axis labels).
const L: f64 = 70.0;
const R: f64 = 20.0;
const T: f64 = 40.0;
const B: f64 = 60.0;

/// The plots of `p`: (file suffix, SVG), e.g. `("latency", …)`; the states plot only for a
/// tier that has states, and none of the latency plots without frames.
pub fn plots(p: &Profile) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if p.latency.count > 0 {
        out.push(("latency", latency_histogram(p)));
        out.push(("cdf", latency_cdf(p)));
    }
    if p.states.is_some() {
        out.push(("states", state_cycles(p)));
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn text(x: f64, y: f64, anchor: &str, s: &str) -> Text {
    Text::new()
        .set("x", x)
        .set("y", y)
        .set("text-anchor", anchor)
        .set("font-family", "sans-serif")
        .set("font-size", 12)
        .add(svg::node::Text::new(escape(s)))
}

fn frame(title: &str, x_label: &str, y_label: &str) -> Document {
    let axis = |x1: f64, y1: f64, x2: f64, y2: f64| {
        Line::new().set("x1", x1).set("y1", y1).set("x2", x2).set("y2", y2).set("stroke", "black")
    };
    Document::new()
        .set("viewBox", (0, 0, W, H))
        .set("width", W)
        .set("height", H)
        .add(Rectangle::new().set("width", W).set("height", H).set("fill", "white"))
        .add(text(W / 2.0, 24.0, "middle", title).set("font-size", 15))
        .add(axis(L, H - B, W - R, H - B))
        .add(axis(L, T, L, H - B))
        .add(text((L + W - R) / 2.0, H - 12.0, "middle", x_label))
        .add(
            text(18.0, (T + H - B) / 2.0, "middle", y_label)
                .set("transform", format!("rotate(-90 18 {})", (T + H - B) / 2.0)),
        )
}

/// Bars of `values` with `labels` under them (every few, when many).
fn bars(mut doc: Document, labels: &[String], values: &[u64], tips: &[String]) -> Document {
    let n = values.len().max(1);
    let top = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let slot = (W - L - R) / n as f64;
    let plot_h = H - T - B;
    let every = n.div_ceil(12);
    for (i, (&v, tip)) in values.iter().zip(tips).enumerate() {
        let h = plot_h * v as f64 / top;
        let x = L + i as f64 * slot;
        doc = doc.add(
            Rectangle::new()
                .set("class", "bar")
                .set("x", x + slot * 0.1)
                .set("y", H - B - h)
                .set("width", slot * 0.8)
                .set("height", h)
                .set("fill", "#4878a8")
                .add(Title::new().add(svg::node::Text::new(escape(tip)))),
        );
        if i % every == 0 {
            doc = doc.add(text(x + slot / 2.0, H - B + 16.0, "middle", &labels[i]).set("font-size", 10));
        }
    }
    doc.add(text(L - 6.0, T + 4.0, "end", &format!("{}", top as u64))).add(text(L - 6.0, H - B, "end", "0"))
}

/// Frames per latency bin.
pub fn latency_histogram(p: &Profile) -> String {
    let l = &p.latency;
    let labels: Vec<String> = l
        .histogram
        .iter()
        .map(|b| if b.lo == b.hi { b.lo.to_string() } else { format!("{}-{}", b.lo, b.hi) })
        .collect();
    let values: Vec<u64> = l.histogram.iter().map(|b| b.count).collect();
    let tips: Vec<String> = labels.iter().zip(&values).map(|(r, c)| format!("{r} {}: {c} frames", l.unit)).collect();
    let doc = frame(
        &format!("{}: latency of {} frames ({})", p.tier, l.count, l.unit),
        &format!("latency ({})", l.unit),
        "frames",
    );
    bars(doc, &labels, &values, &tips).to_string()
}

/// The share of frames at most each latency.
pub fn latency_cdf(p: &Profile) -> String {
    let l = &p.latency;
    let (lo, hi) = (l.min as f64, (l.max as f64).max(l.min as f64 + 1.0));
    let x = |v: u64| L + (W - L - R) * (v as f64 - lo) / (hi - lo);
    let y = |f: f64| H - B - (H - T - B) * f;
    let points: Vec<String> = l.cdf.iter().map(|&(v, f)| format!("{:.1},{:.1}", x(v), y(f))).collect();
    frame(&format!("{}: latency CDF ({} frames)", p.tier, l.count), &format!("latency ({})", l.unit), "share of frames")
        .add(
            Polyline::new()
                .set("class", "cdf")
                .set("points", points.join(" "))
                .set("fill", "none")
                .set("stroke", "#c04040")
                .set("stroke-width", 2),
        )
        .add(text(L, H - B + 16.0, "middle", &l.min.to_string()))
        .add(text(W - R, H - B + 16.0, "middle", &l.max.to_string()))
        .add(text(L - 6.0, T + 4.0, "end", "1"))
        .add(text(L - 6.0, H - B, "end", "0"))
        .to_string()
}

/// Cycles spent in each FSM state (and idle, and sending).
pub fn state_cycles(p: &Profile) -> String {
    let Some(st) = &p.states else { return String::new() };
    let labels: Vec<String> = st.states.iter().map(|(n, _)| n.split(" (").next().unwrap_or(n).to_string()).collect();
    let values: Vec<u64> = st.states.iter().map(|(_, c)| *c).collect();
    let tips: Vec<String> = st.states.iter().map(|(n, c)| format!("{n}: {c} cycles")).collect();
    let doc = frame(&format!("{}: cycles per FSM state ({} in all)", p.tier, st.total), "state", "cycles");
    bars(doc, &labels, &values, &tips).to_string()
}
