//! The client side of `emu dbg`: requests with retries over a [`Transport`], the symbol table
//! fetched once, and the command language (`read mac_table[3]`, `watch hits >= 3`, `step 3`)
//! that shows names and typed values, never symbol numbers or raw bytes.

use crate::protocol::{
    decode, encode, Format, Message, Notification, Reply, Request, Status, SymbolInfo, SymbolKind, TraceVerdict,
    WatchOp,
};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Carries encoded messages (header and payload) to a debug unit and back.
pub trait Transport {
    /// Sends one message.
    fn send(&mut self, msg: &[u8]) -> std::io::Result<()>;
    /// The next message from the unit, waiting at most `timeout`; `None` if none came.
    fn recv(&mut self, timeout: Duration) -> std::io::Result<Option<Vec<u8>>>;
}

/// How long a reply may take before the request is sent once more, and then given up.
pub const REPLY_TIMEOUT: Duration = Duration::from_millis(200);

/// A connected client: the NF's name and symbols, and notifications not yet shown.
pub struct Client<T: Transport> {
    transport: T,
    seq: u32,
    nf: String,
    symbols: Vec<SymbolInfo>,
    pending: Vec<Notification>,
    /// Watchpoint slots this session armed: the unit does not say which are free.
    slots: Vec<bool>,
}

/// What went wrong, in words for the user.
pub type Error = String;

/// Sends `request`, numbered `seq`, over `transport` and waits for its reply (once more after
/// [`REPLY_TIMEOUT`]): its payload when `ok`, else what went wrong. Notifications that arrive
/// meanwhile go to `pending`; other messages (a stale reply) are dropped.
pub fn exchange<T: Transport>(
    transport: &mut T,
    seq: u32,
    request: Request,
    pending: &mut Vec<Notification>,
) -> Result<Reply, Error> {
    let opcode = request.opcode();
    let bytes = encode(&Message::Request { seq, request });
    for attempt in 0..2 {
        transport.send(&bytes).map_err(|e| format!("sending {opcode}: {e}"))?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Some(msg) = transport.recv(left).map_err(|e| format!("waiting for {opcode}: {e}"))? else {
                break;
            };
            match decode(&msg) {
                Ok(Message::Reply { seq: s, status, reply, .. }) if s == seq => {
                    return match status {
                        Status::Ok => Ok(reply),
                        Status::Duplicate if attempt > 0 => {
                            Err(format!("{opcode}: the first try was executed but its reply was lost; read the state to see its effect"))
                        }
                        s => Err(format!("{opcode}: {}", explain(s))),
                    };
                }
                Ok(Message::Notification { notification, .. }) => pending.push(notification),
                _ => {} // a stale reply, or not ours
            }
        }
    }
    Err(format!("the debug unit did not answer {opcode} (twice, {} ms each): is the channel on and is this its management port?", REPLY_TIMEOUT.as_millis()))
}

impl<T: Transport> Client<T> {
    /// Says hello and reads the symbol table. `first_seq` starts the request numbering (a
    /// new session should not start where the last one left off, or its first request could
    /// be taken for a retransmission).
    pub fn connect(transport: T, first_seq: u32) -> Result<Client<T>, Error> {
        let mut c = Client {
            transport,
            seq: first_seq,
            nf: String::new(),
            symbols: Vec::new(),
            pending: Vec::new(),
            slots: Vec::new(),
        };
        let Reply::Hello(h) = c.request(Request::Hello)? else {
            return Err("the unit's hello reply is malformed".into());
        };
        c.nf = h.nf;
        c.slots = vec![false; h.watch_slots as usize];
        for id in 0..h.symbols {
            match c.request(Request::Symbol { id })? {
                Reply::Symbol(s) => c.symbols.push(s),
                _ => return Err(format!("the unit's description of symbol {id} is malformed")),
            }
        }
        Ok(c)
    }

    /// The NF's name.
    pub fn nf(&self) -> &str {
        &self.nf
    }

    /// The symbol table.
    pub fn symbols(&self) -> &[SymbolInfo] {
        &self.symbols
    }

    /// Sends `request` and waits for its reply (once more after [`REPLY_TIMEOUT`]);
    /// notifications that arrive meanwhile are kept for [`Client::take_notifications`].
    pub fn request(&mut self, request: Request) -> Result<Reply, Error> {
        self.seq = self.seq.wrapping_add(1);
        exchange(&mut self.transport, self.seq, request, &mut self.pending)
    }

    /// Notifications received so far, oldest first, after waiting up to `wait` for more.
    pub fn take_notifications(&mut self, wait: Duration) -> Result<Vec<Notification>, Error> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.transport.recv(left).map_err(|e| format!("waiting for notifications: {e}"))? {
                Some(msg) => {
                    if let Ok(Message::Notification { notification, .. }) = decode(&msg) {
                        self.pending.push(notification);
                    }
                }
                None => break,
            }
            if left.is_zero() {
                break;
            }
        }
        Ok(std::mem::take(&mut self.pending))
    }

    /// Runs one command of the language (`help` lists them) and gives what to print.
    pub fn exec(&mut self, line: &str) -> Result<String, Error> {
        let line = line.trim();
        let (verb, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let mut out = match verb {
            "" => String::new(),
            "help" => HELP.to_string(),
            "symbols" => self.list_symbols(),
            "read" => self.read(rest)?,
            "write" => self.write(rest)?,
            "counters" => self.counters()?,
            "reset" => {
                let id = if rest == "all" { None } else { Some(self.symbol(rest)?.0) };
                self.request(Request::ResetCounters { id })?;
                format!("reset {rest}")
            }
            "watch" => self.watch(rest)?,
            "unwatch" => {
                let slot = if rest == "all" {
                    None
                } else {
                    Some(
                        parse_uint(rest, 8)
                            .map_err(|e| format!("unwatch {rest}: {e}; write `unwatch SLOT` or `unwatch all`"))?
                            as u8,
                    )
                };
                self.request(Request::Unwatch { slot })?;
                match slot {
                    Some(k) => self.slots.get_mut(k as usize).into_iter().for_each(|s| *s = false),
                    None => self.slots.iter_mut().for_each(|s| *s = false),
                }
                format!("unwatched {rest}")
            }
            "trace" => {
                let mut words = rest.split_whitespace();
                let on = match words.next() {
                    Some("on") => true,
                    Some("off") => false,
                    _ => return Err("write `trace on [SNAP_BYTES]` or `trace off`".into()),
                };
                let snap = words
                    .next()
                    .map(|w| w.parse::<u16>().map_err(|_| format!("`{w}` is not a byte count")))
                    .transpose()?
                    .unwrap_or(crate::protocol::DEFAULT_SNAP);
                self.request(Request::Trace { on, snap })?;
                format!("trace {}", if on { "on" } else { "off" })
            }
            "break" => match self.request(Request::Break)? {
                Reply::Break { held } => format!("break: packets are held at the input ({held} held)"),
                r => unexpected(r)?,
            },
            "step" => {
                let n = if rest.is_empty() {
                    1
                } else {
                    rest.parse::<u16>().map_err(|_| format!("step {rest}: write `step N`, N a packet count"))?
                };
                match self.request(Request::Step { n })? {
                    Reply::Step { released, held } => {
                        format!("stepped {released} packet{} ({held} still held)", plural(released))
                    }
                    r => unexpected(r)?,
                }
            }
            "continue" => match self.request(Request::Continue)? {
                Reply::Continue { released } => {
                    format!("running ({released} held packet{} released)", plural(released))
                }
                r => unexpected(r)?,
            },
            "status" => match self.request(Request::Status)? {
                Reply::Status(s) => format!(
                    "{}, {} held, trace {}, {} watch hit{}, {} passed while the hold was full",
                    if s.broken { "broken" } else { "running" },
                    s.held,
                    if s.tracing { "on" } else { "off" },
                    s.watch_hits,
                    plural(s.watch_hits as u16),
                    s.passed_while_full
                ),
                r => unexpected(r)?,
            },
            "wait" => {
                let ms = if rest.is_empty() {
                    500
                } else {
                    rest.trim_end_matches("ms")
                        .parse::<u64>()
                        .map_err(|_| format!("wait {rest}: write `wait MILLISECONDS`"))?
                };
                let notes = self.take_notifications(Duration::from_millis(ms))?;
                return Ok(notes.iter().map(|n| self.show_notification(n)).collect::<Vec<_>>().join("\n"));
            }
            other => return Err(format!("unknown command `{other}`; `help` lists the commands")),
        };
        // Notifications that came with the reply are shown after it, in order.
        for n in std::mem::take(&mut self.pending) {
            out.push('\n');
            out.push_str(&self.show_notification(&n));
        }
        Ok(out)
    }

    fn symbol(&self, name: &str) -> Result<(u16, &SymbolInfo), Error> {
        if let Some(i) = self.symbols.iter().position(|s| s.name == name) {
            return Ok((i as u16, &self.symbols[i]));
        }
        let near: Vec<&str> =
            self.symbols.iter().map(|s| s.name.as_str()).filter(|n| n.contains(name) || name.contains(n)).collect();
        let hint = if near.is_empty() { String::new() } else { format!(" (did you mean {}?)", near.join(", ")) };
        Err(format!("{} has no state element, probe or counter `{name}`{hint}; `symbols` lists them", self.nf))
    }

    fn list_symbols(&self) -> String {
        let mut out = String::new();
        for s in &self.symbols {
            let kind = SymbolKind::from_code(s.kind).map_or("?", SymbolKind::name);
            let _ =
                write!(out, "{:<20} {:<12} {:>6} entr{}", s.name, kind, s.size, if s.size == 1 { "y" } else { "ies" });
            if s.key_width > 0 {
                let _ = write!(out, ", key {} bits", s.key_width);
            }
            let _ = writeln!(out, ", value {} bits", s.value_width);
        }
        out.trim_end().to_string()
    }

    /// `NAME`, `NAME[INDEX]` or `NAME[key=KEY]`: the symbol, and the index (looked up by key
    /// if need be) with the entry when the key was looked up.
    fn place(&mut self, target: &str) -> Result<(u16, u32, Option<Vec<u8>>), Error> {
        let (name, sub) = match target.split_once('[') {
            Some((n, s)) => {
                (n.trim(), Some(s.strip_suffix(']').ok_or_else(|| format!("`{target}`: a `]` is missing"))?.trim()))
            }
            None => (target.trim(), None),
        };
        let (id, s) = self.symbol(name)?;
        let s = s.clone();
        match sub {
            None => Ok((id, 0, None)),
            Some(k) if k.starts_with("key=") => {
                let key = parse_value(&k[4..], s.key_width, s.key_format)?;
                match self.request(Request::Lookup { id, key })? {
                    Reply::Found { index, entry } => Ok((id, index, Some(entry))),
                    r => unexpected(r),
                }
            }
            Some(i) => Ok((id, parse_uint(i, 32).map_err(|e| format!("`{target}`: {e}"))? as u32, None)),
        }
    }

    fn read(&mut self, target: &str) -> Result<String, Error> {
        if target.is_empty() {
            return Err("write `read NAME`, `read NAME[INDEX]` or `read NAME[key=KEY]`".into());
        }
        let (id, index, found) = self.place(target)?;
        let entry = match found {
            Some(e) => e,
            None => match self.request(Request::Read { id, index })? {
                Reply::Entry(e) => e,
                r => unexpected(r)?,
            },
        };
        let s = &self.symbols[id as usize];
        Ok(format!("{} = {}", place_name(s, index), show_entry(s, &entry)))
    }

    fn write(&mut self, rest: &str) -> Result<String, Error> {
        let (target, value) = rest
            .split_once('=')
            .ok_or("write `write NAME[INDEX] = VALUE` (a table entry: `= KEY -> VALUE`, or `= empty`)")?;
        let (id, index, _) = self.place(target.trim())?;
        let s = self.symbols[id as usize].clone();
        let value = value.trim();
        let entry = if s.key_width > 0 {
            if value == "empty" {
                vec![0; 1 + bytes_of(s.key_width) + bytes_of(s.value_width)]
            } else {
                let (k, v) = value.split_once("->").ok_or("a table entry is written `KEY -> VALUE` (or `empty`)")?;
                let mut e = vec![1];
                e.extend(parse_value(k.trim(), s.key_width, s.key_format)?);
                e.extend(parse_value(v.trim(), s.value_width, s.value_format)?);
                e
            }
        } else {
            parse_value(value, s.value_width, s.value_format)?
        };
        self.request(Request::Write { id, index, entry: entry.clone() })?;
        Ok(format!("{} = {}", place_name(&s, index), show_entry(&s, &entry)))
    }

    /// Every counter of the NF, and the target's automatic counters that are not zero.
    fn counters(&mut self) -> Result<String, Error> {
        let mut out = String::new();
        let (mut first, mut index) = (0u16, 0u32);
        loop {
            let Reply::Counters(cs) = self.request(Request::Counters { first, index, count: 100 })? else {
                return Err("the unit's counters reply is malformed".into());
            };
            for c in &cs {
                let s = &self.symbols[c.id as usize];
                if s.kind == SymbolKind::AutoCounter.code() && c.value == 0 {
                    continue;
                }
                let _ = writeln!(out, "{} = {}", place_name(s, c.index), c.value);
            }
            match cs.last() {
                Some(last) if cs.len() == 100 => (first, index) = (last.id, last.index + 1),
                _ => break,
            }
        }
        Ok(out.trim_end().to_string())
    }

    fn watch(&mut self, rest: &str) -> Result<String, Error> {
        const USAGE: &str = "write `watch NAME[INDEX] OP VALUE [record]` (OP one of == != < <= > >=) or `watch NAME[INDEX] changes [record]`";
        let mut words: Vec<&str> = rest.split_whitespace().collect();
        let record = words.last() == Some(&"record");
        if record {
            words.pop();
        }
        let (target, op, operand) = match words.as_slice() {
            [t, "changes"] => (*t, WatchOp::Changes, None),
            [t, op, v] => {
                let op = [WatchOp::Eq, WatchOp::Ne, WatchOp::Lt, WatchOp::Le, WatchOp::Gt, WatchOp::Ge]
                    .into_iter()
                    .find(|o| o.name() == *op)
                    .ok_or_else(|| format!("`{op}` is not a comparison; {USAGE}"))?;
                (*t, op, Some(*v))
            }
            _ => return Err(USAGE.into()),
        };
        let (id, index, _) = self.place(target)?;
        let s = self.symbols[id as usize].clone();
        let operand = operand.map(|v| parse_value(v, s.value_width, s.value_format)).transpose()?.unwrap_or_default();
        let slot = self
            .slots
            .iter()
            .position(|used| !used)
            .ok_or("every watchpoint slot is in use; `unwatch SLOT` one first")?;
        let slot = slot as u8;
        self.request(Request::Watch { slot, id, index, op, operand, record })?;
        self.slots[slot as usize] = true;
        Ok(format!("watch {slot}: {target} {op}{}", words.get(2).map(|v| format!(" {v}")).unwrap_or_default()))
    }

    fn show_notification(&self, n: &Notification) -> String {
        match n {
            Notification::WatchHit { slot, id, index, packet_no, value, packet } => {
                let s = &self.symbols.get(*id as usize);
                let name = s.map_or("?", |s| s.name.as_str());
                let shown = s.map_or_else(|| hex(value), |s| show_value(value, s.value_format));
                let place = s.map_or_else(|| format!("{name}[{index}]"), |s| place_name(s, *index));
                let mut out = format!("watch {slot} hit: {place} = {shown} after packet {packet_no}");
                if let Some((port, bytes)) = packet {
                    let _ = write!(out, " (in port {port}: {})", hex(bytes));
                }
                out
            }
            Notification::Trace { packet_no, in_port, verdict, latency, len, bytes } => {
                let v = match verdict {
                    TraceVerdict::Drop(r) => format!("dropped (reason {r})"),
                    TraceVerdict::Send(mask) => {
                        let ports: Vec<String> =
                            (0..32).filter(|p| mask >> p & 1 == 1).map(|p| p.to_string()).collect();
                        format!("sent to port{} {}", if ports.len() == 1 { "" } else { "s" }, ports.join(","))
                    }
                };
                // A hardware unit records no bytes.
                let first = if bytes.is_empty() { String::new() } else { format!(": {}", hex(bytes)) };
                format!("trace: packet {packet_no}, in port {in_port}, {len} bytes, {v}, latency {latency}{first}")
            }
            Notification::HoldFull { held } => {
                format!("the hold is full ({held} packets): further packets pass until `continue`")
            }
        }
    }
}

const HELP: &str = "\
symbols                          the NF's state elements, probes and counters
read NAME[INDEX]                 an entry (NAME alone: entry 0); NAME[key=KEY] finds a table entry by key
write NAME[INDEX] = VALUE        a register, counter or array entry; a table entry: = KEY -> VALUE, or = empty
counters                         every counter
reset NAME | all                 zero a counter, or all
watch NAME[INDEX] OP VALUE       notify when the entry's value becomes OP VALUE (== != < <= > >=); add `record`
watch NAME[INDEX] changes        notify on every change; add `record` to get the packet that did it
unwatch SLOT | all               disarm watchpoints
trace on [SNAP] | off            a record of every packet (its first SNAP bytes, default 64) and verdict
break | step [N] | continue      hold packets at the input; release N; release all and run
status                           running or broken, packets held, watch hits
wait [MS]                        show notifications arriving within MS milliseconds (default 500)";

/// `name[index]`, or `name` for a one-entry symbol (a register, a counter).
fn place_name(s: &SymbolInfo, index: u32) -> String {
    if s.size == 1 && index == 0 {
        s.name.clone()
    } else {
        format!("{}[{index}]", s.name)
    }
}

fn unexpected<R>(r: Reply) -> Result<R, Error> {
    Err(format!("the unit answered with an unexpected reply: {r:?}"))
}

fn plural(n: u16) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn explain(s: Status) -> String {
    let why = match s {
        Status::NoSuchSymbol => "no such symbol (the symbol table changed? reconnect)",
        Status::BadIndex => "the index is past the element's size",
        Status::BadValue => {
            "the value does not fit the element (too wide, or not a counter), or a table entry's key \
             is in another slot already or (a hash table) hashes to another set"
        }
        Status::ReadOnly => "this element is read only",
        Status::NoSuchKey => "the key is not in the table",
        Status::NoSlot => "no free watchpoint slot (`unwatch SLOT` one)",
        Status::NotBroken => "not broken: `break` first",
        Status::Busy => "the hardware was busy; try again",
        Status::Unsupported => "this target's debug unit cannot do that yet",
        other => other.name(),
    };
    why.to_string()
}

fn bytes_of(width: u16) -> usize {
    (width as usize).div_ceil(8)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A value as its format shows it.
pub fn show_value(b: &[u8], format: u8) -> String {
    match Format::from_code(format) {
        Some(Format::Mac) if b.len() == 6 => b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":"),
        Some(Format::Ipv4) if b.len() == 4 => format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]),
        Some(Format::Bool) if b.len() == 1 && b[0] <= 1 => (b[0] == 1).to_string(),
        Some(Format::Uint) if b.len() <= 16 => b.iter().fold(0u128, |v, &x| v << 8 | x as u128).to_string(),
        _ => format!("0x{}", hex(b)),
    }
}

/// A whole entry: a table's `valid` flag, key and value, or the value alone.
fn show_entry(s: &SymbolInfo, e: &[u8]) -> String {
    let (k, v) = (bytes_of(s.key_width), bytes_of(s.value_width));
    if s.key_width == 0 || e.len() < 1 + k + v {
        return show_value(&e[e.len().saturating_sub(v)..], s.value_format);
    }
    if e[0] == 0 {
        return "empty".into();
    }
    format!("{} -> {}", show_value(&e[1..1 + k], s.key_format), show_value(&e[1 + k..1 + k + v], s.value_format))
}

fn parse_uint(text: &str, width: u16) -> Result<u128, Error> {
    let t = text.replace('_', "");
    let v = match t.strip_prefix("0x") {
        Some(h) => u128::from_str_radix(h, 16),
        None => t.parse::<u128>(),
    }
    .map_err(|_| format!("`{text}` is not a number (decimal, or hex with 0x)"))?;
    if width < 128 && v >> width != 0 {
        return Err(format!("`{text}` does not fit in {width} bits"));
    }
    Ok(v)
}

/// Reads `text` as a value of `width` bits shown as `format` (a MAC, an address, a number,
/// hex), big-endian in the protocol's byte count.
pub fn parse_value(text: &str, width: u16, format: u8) -> Result<Vec<u8>, Error> {
    let n = bytes_of(width);
    if text.contains(':') && n == 6 {
        let parts: Vec<u8> = text
            .split(':')
            .map(|p| u8::from_str_radix(p, 16))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("`{text}` is not a MAC address"))?;
        if parts.len() == 6 {
            return Ok(parts);
        }
    }
    if text.matches('.').count() == 3 && n == 4 {
        let a: std::net::Ipv4Addr = text.parse().map_err(|_| format!("`{text}` is not an IPv4 address"))?;
        return Ok(a.octets().to_vec());
    }
    if Format::from_code(format) == Some(Format::Bool) {
        return match text {
            "true" => Ok(vec![1]),
            "false" => Ok(vec![0]),
            _ => Err(format!("`{text}` is not `true` or `false`")),
        };
    }
    if let Some(h) = text.strip_prefix("0x").filter(|h| h.len() > 32) {
        // Wider than a u128: hex bytes, most significant first.
        let bytes: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..(i + 2).min(h.len())], 16))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("`{text}` is not hex"))?;
        if bytes.len() > n {
            return Err(format!("`{text}` is wider than {width} bits"));
        }
        let mut out = vec![0; n - bytes.len()];
        out.extend(bytes);
        return Ok(out);
    }
    let v = parse_uint(text, width)?;
    Ok(v.to_be_bytes()[16usize.saturating_sub(n)..].to_vec()).map(|mut b| {
        b.splice(0..0, std::iter::repeat(0).take(n.saturating_sub(16)));
        b
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::unit::{Inspect, Limits, Outcome, Unit};
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// A learning switch's state, as far as the debugger sees it: a `floods` counter and a
    /// 4-slot MAC table.
    #[derive(Default)]
    struct Switch {
        floods: u64,
        table: [(bool, [u8; 6], u8); 4],
    }

    impl Inspect for Switch {
        fn symbols(&self) -> Vec<SymbolInfo> {
            vec![
                SymbolInfo {
                    kind: SymbolKind::Cam.code(),
                    size: 4,
                    key_width: 48,
                    value_width: 8,
                    key_format: Format::Mac.code(),
                    value_format: Format::Uint.code(),
                    name: "mac_table".into(),
                },
                SymbolInfo {
                    kind: SymbolKind::Counter.code(),
                    size: 1,
                    key_width: 0,
                    value_width: 64,
                    key_format: 0,
                    value_format: 0,
                    name: "floods".into(),
                },
            ]
        }
        fn read(&self, id: u16, index: u32) -> Result<Vec<u8>, Status> {
            match (id, index) {
                (0, i) if i < 4 => {
                    let (v, k, p) = self.table[i as usize];
                    Ok([&[v as u8][..], &k, &[p]].concat())
                }
                (1, 0) => Ok(self.floods.to_be_bytes().to_vec()),
                _ => Err(Status::BadIndex),
            }
        }
        fn write(&mut self, id: u16, index: u32, e: &[u8]) -> Result<(), Status> {
            match (id, index) {
                (0, i) if i < 4 && e.len() == 8 => {
                    self.table[i as usize] = (e[0] == 1, e[1..7].try_into().unwrap(), e[7])
                }
                (1, 0) if e.len() == 8 => self.floods = u64::from_be_bytes(e.try_into().unwrap()),
                _ => return Err(Status::BadIndex),
            }
            Ok(())
        }
        fn lookup(&self, _id: u16, key: &[u8]) -> Result<(u32, Vec<u8>), Status> {
            let i = self.table.iter().position(|(v, k, _)| *v && k[..] == *key).ok_or(Status::NoSuchKey)?;
            Ok((i as u32, self.read(0, i as u32)?))
        }
        fn reset(&mut self, _id: u16) -> Result<(), Status> {
            self.floods = 0;
            Ok(())
        }
    }

    /// The unit and its NF in the same process: a request is answered at once.
    struct Loop {
        unit: Rc<RefCell<(Unit, Switch)>>,
        inbox: VecDeque<Vec<u8>>,
    }

    impl Transport for Loop {
        fn send(&mut self, msg: &[u8]) -> std::io::Result<()> {
            let mut u = self.unit.borrow_mut();
            let (unit, nf) = &mut *u;
            self.inbox.extend(unit.take_notifications());
            self.inbox.extend(unit.control(msg, nf));
            Ok(())
        }
        fn recv(&mut self, _timeout: Duration) -> std::io::Result<Option<Vec<u8>>> {
            let mut u = self.unit.borrow_mut();
            self.inbox.extend(u.0.take_notifications());
            Ok(self.inbox.pop_front())
        }
    }

    fn connected() -> (Client<Loop>, Rc<RefCell<(Unit, Switch)>>) {
        let shared = Rc::new(RefCell::new((Unit::new("learning_switch", Limits::default()), Switch::default())));
        let c = Client::connect(Loop { unit: shared.clone(), inbox: VecDeque::new() }, 1000).unwrap();
        (c, shared)
    }

    /// The NF floods a packet: the counter goes up and the unit observes it.
    fn flood(shared: &Rc<RefCell<(Unit, Switch)>>, k: u8) {
        let mut u = shared.borrow_mut();
        let (unit, nf) = &mut *u;
        if let Some((port, bytes)) = unit.admit(1, vec![k; 60]) {
            nf.floods += 1;
            unit.observe(
                &Outcome {
                    packet_no: k as u64,
                    in_port: port,
                    bytes: &bytes,
                    verdict: TraceVerdict::Send(0b1101),
                    latency: 9,
                },
                nf,
            );
        }
    }

    #[test]
    fn a_session_by_names() {
        let (mut c, shared) = connected();
        assert_eq!(c.nf(), "learning_switch");
        assert!(c
            .exec("symbols")
            .unwrap()
            .contains("mac_table            cam               4 entries, key 48 bits, value 8 bits"));
        assert_eq!(
            c.exec("write mac_table[2] = 02:00:00:00:00:09 -> 3").unwrap(),
            "mac_table[2] = 02:00:00:00:00:09 -> 3"
        );
        assert_eq!(c.exec("read mac_table[key=02:00:00:00:00:09]").unwrap(), "mac_table[2] = 02:00:00:00:00:09 -> 3");
        assert_eq!(c.exec("read mac_table[0]").unwrap(), "mac_table[0] = empty");
        assert_eq!(c.exec("watch floods >= 2 record").unwrap(), "watch 0: floods >= 2");
        assert_eq!(c.exec("watch mac_table[2] changes").unwrap(), "watch 1: mac_table[2] changes");
        assert_eq!(c.exec("unwatch 1").unwrap(), "unwatched 1");
        assert!(c.exec("break").unwrap().starts_with("break"));
        for k in 0..3 {
            flood(&shared, k);
        }
        assert_eq!(c.exec("step 2").unwrap().lines().next().unwrap(), "stepped 2 packets (1 still held)");
        let released: Vec<_> = std::iter::from_fn(|| shared.borrow_mut().0.next_released()).collect();
        for (k, (_, p)) in released.iter().enumerate() {
            let mut u = shared.borrow_mut();
            let (unit, nf) = &mut *u;
            nf.floods += 1;
            unit.observe(
                &Outcome { packet_no: k as u64, in_port: 1, bytes: p, verdict: TraceVerdict::Send(1), latency: 3 },
                nf,
            );
        }
        let notes = c.exec("wait 10").unwrap();
        assert!(
            notes.starts_with("watch ") && notes.contains("hit: floods = 2 after packet 1 (in port 1: 0101"),
            "{notes}"
        );
        assert_eq!(c.exec("read floods").unwrap(), "floods = 2");
        assert_eq!(c.exec("continue").unwrap(), "running (1 held packet released)");
        assert_eq!(c.exec("counters").unwrap(), "floods = 2");
    }

    #[test]
    fn mistakes_say_what_to_write() {
        let (mut c, _) = connected();
        assert!(c
            .exec("read mac_tabel[1]")
            .unwrap_err()
            .contains("has no state element, probe or counter `mac_tabel`"));
        assert!(c.exec("read mac[1]").unwrap_err().contains("did you mean mac_table?"));
        assert!(c.exec("read mac_table[9]").unwrap_err().contains("past the element's size"));
        assert!(c.exec("read mac_table[key=02:00:00:00:00:01]").unwrap_err().contains("not in the table"));
        assert!(c.exec("write floods = 0x1_0000_0000_0000_0000").unwrap_err().contains("does not fit in 64 bits"));
        assert!(c.exec("step").unwrap_err().contains("`break` first"));
        assert!(c.exec("watch floods ~ 3").unwrap_err().contains("is not a comparison"));
        assert!(c.exec("frobnicate").unwrap_err().contains("`help` lists the commands"));
    }

    #[test]
    fn values_parse_and_show_by_format() {
        assert_eq!(parse_value("10.0.0.1", 32, Format::Ipv4.code()).unwrap(), [10, 0, 0, 1]);
        assert_eq!(show_value(&[10, 0, 0, 1], Format::Ipv4.code()), "10.0.0.1");
        assert_eq!(parse_value("0x0102", 16, 0).unwrap(), [1, 2]);
        assert_eq!(parse_value("300", 9, 0).unwrap(), [1, 44]);
        assert!(parse_value("600", 9, 0).is_err());
        let wide = format!("0x{}", "ab".repeat(20));
        assert_eq!(parse_value(&wide, 256, Format::Hex.code()).unwrap().len(), 32);
        assert_eq!(show_value(&[0xab; 20], Format::Hex.code()), format!("0x{}", "ab".repeat(20)));
    }
}
