//! The client side of `emu dbg`: requests with retries over a [`Transport`], the symbol table
//! fetched once, and the command language (`read mac_table[3]`, `watch hits >= 3`, `step 3`)
//! that shows names and typed values, never symbol numbers or raw bytes. Each refusal says
//! which rule the command broke, with the limit it met.

use crate::protocol::{
    decode, encode, Format, Hello, Message, Notification, Reply, Request, Status, SymbolInfo, SymbolKind,
    TraceVerdict, WatchInfo, WatchOp, ANY_SLOT, MAX_SNAP,
};
use emu_core::DropReason;
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

/// The commands of the language, for `help`, completion and "did you mean".
pub const COMMANDS: &[&str] = &[
    "break", "continue", "counters", "dump", "help", "quit", "read", "reset", "status", "step", "symbols", "trace",
    "unwatch", "wait", "watch", "watches", "write",
];

/// A connected client: the NF's name and symbols, and notifications not yet shown.
pub struct Client<T: Transport> {
    transport: T,
    seq: u32,
    hello: Hello,
    symbols: Vec<SymbolInfo>,
    pending: Vec<Notification>,
    /// The unit was at a break when it last said.
    broken: bool,
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
    exchange_status(transport, seq, request, pending)?.map_err(|s| format!("{opcode}: {}", explain(s)))
}

/// As [`exchange`], with the unit's refusal as its status (`Ok(Err(status))`), for a caller
/// that says exactly what was refused; `Err` is a failure to reach the unit.
pub fn exchange_status<T: Transport>(
    transport: &mut T,
    seq: u32,
    request: Request,
    pending: &mut Vec<Notification>,
) -> Result<Result<Reply, Status>, Error> {
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
                        Status::Ok => Ok(Ok(reply)),
                        Status::Duplicate if attempt > 0 => Err(format!(
                            "{opcode}: the first try was executed but its reply was lost; read the state to see its effect"
                        )),
                        s => Ok(Err(s)),
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
        let hello = Hello {
            symbols: 0,
            watch_slots: 0,
            trace_depth: 0,
            hold_depth: 0,
            broken: false,
            tracing: false,
            latency_in_cycles: false,
            nf: String::new(),
            max_snap: 0,
        };
        let mut c = Client { transport, seq: first_seq, hello, symbols: Vec::new(), pending: Vec::new(), broken: false };
        let Reply::Hello(h) = c.request(Request::Hello)? else {
            return Err("the unit's hello reply is malformed".into());
        };
        for id in 0..h.symbols {
            match c.request(Request::Symbol { id })? {
                Reply::Symbol(s) => c.symbols.push(s),
                _ => return Err(format!("the unit's description of symbol {id} is malformed")),
            }
        }
        c.broken = h.broken;
        c.hello = h;
        Ok(c)
    }

    /// The NF's name.
    pub fn nf(&self) -> &str {
        &self.hello.nf
    }

    /// The symbol table.
    pub fn symbols(&self) -> &[SymbolInfo] {
        &self.symbols
    }

    /// Sends `request` and waits for its reply (once more after [`REPLY_TIMEOUT`]);
    /// notifications that arrive meanwhile are kept for [`Client::take_notifications`].
    pub fn request(&mut self, request: Request) -> Result<Reply, Error> {
        let opcode = request.opcode();
        self.ask(request)?.map_err(|s| format!("{opcode}: {}", explain(s)))
    }

    /// As [`Client::request`], with the unit's refusal as its status.
    fn ask(&mut self, request: Request) -> Result<Result<Reply, Status>, Error> {
        self.seq = self.seq.wrapping_add(1);
        exchange_status(&mut self.transport, self.seq, request, &mut self.pending)
    }

    /// Notifications received so far, oldest first, after waiting up to `wait` for more
    /// (less if `stop` becomes true: Ctrl-C ends a `wait`).
    pub fn take_notifications(&mut self, wait: Duration) -> Result<Vec<Notification>, Error> {
        self.take_notifications_until(wait, &|| false)
    }

    fn take_notifications_until(&mut self, wait: Duration, stop: &dyn Fn() -> bool) -> Result<Vec<Notification>, Error> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(100));
            if let Some(msg) = self.transport.recv(left).map_err(|e| format!("waiting for notifications: {e}"))? {
                if let Ok(Message::Notification { notification, .. }) = decode(&msg) {
                    self.pending.push(notification);
                }
            }
            if Instant::now() >= deadline || stop() {
                break;
            }
        }
        Ok(std::mem::take(&mut self.pending))
    }

    /// Tells the unit this session is still there while it holds a break (a `status`): in
    /// band there is no connection to say so, and the unit ends a break no client touches for
    /// its break timeout.
    pub fn keep_alive(&mut self) -> Result<(), Error> {
        if self.broken {
            if let Reply::Status(s) = self.request(Request::Status)? {
                self.broken = s.broken;
            }
        }
        Ok(())
    }

    /// Notifications that have arrived, shown, after a short look (an interactive session
    /// prints them as they come).
    pub fn arrived(&mut self) -> Result<Vec<String>, Error> {
        let notes = self.take_notifications(Duration::from_millis(5))?;
        Ok(notes.iter().map(|n| self.show_notification(n)).collect())
    }

    /// Runs one command of the language (`help` lists them) and gives what to print.
    pub fn exec(&mut self, line: &str) -> Result<String, Error> {
        self.exec_until(line, &|| false)
    }

    /// As [`Client::exec`]; a `wait` ends early when `stop` becomes true (Ctrl-C).
    pub fn exec_until(&mut self, line: &str, stop: &dyn Fn() -> bool) -> Result<String, Error> {
        let line = line.trim();
        let (verb, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let mut out = match verb {
            "" => String::new(),
            "help" => HELP.to_string(),
            "symbols" => self.list_symbols(),
            "read" => self.read(rest)?,
            "dump" => self.dump(rest)?,
            "write" => self.write(rest)?,
            "counters" => self.counters()?,
            "reset" => self.reset(rest)?,
            "watch" => self.watch(rest)?,
            "watches" => self.watches()?,
            "unwatch" => self.unwatch(rest)?,
            "trace" => self.trace(rest)?,
            "break" => match self.request(Request::Break)? {
                Reply::Break { held } => {
                    self.broken = true;
                    format!("break: packets are held at the input ({held} held)")
                }
                r => unexpected(r)?,
            },
            "step" => {
                let n = if rest.is_empty() {
                    1
                } else {
                    rest.parse::<u16>()
                        .map_err(|_| format!("step {rest}: write `step N`, N a packet count from 1 to 65535"))?
                };
                match self.ask(Request::Step { n })? {
                    Ok(Reply::Step { released, held }) => {
                        format!("stepped {released} packet{} ({held} still held)", plural(released as u32))
                    }
                    Err(Status::NotBroken) => return Err("step: running, nothing is held: `break` first".into()),
                    Err(s) => return Err(format!("step: {}", explain(s))),
                    Ok(r) => unexpected(r)?,
                }
            }
            "continue" => match self.request(Request::Continue)? {
                Reply::Continue { released } => {
                    self.broken = false;
                    format!("running ({released} held packet{} released)", plural(released as u32))
                }
                r => unexpected(r)?,
            },
            "status" => match self.request(Request::Status)? {
                Reply::Status(s) => {
                    self.broken = s.broken;
                    let mut out = format!(
                        "{}, {} held, trace {}, {} watch hit{}, {} passed while the hold was full",
                        if s.broken { "broken" } else { "running" },
                        s.held,
                        if s.tracing { "on" } else { "off" },
                        s.watch_hits,
                        plural(s.watch_hits),
                        s.passed_while_full
                    );
                    if s.breaks_timed_out > 0 {
                        let _ = write!(
                            out,
                            ", {} break{} ended with no client in touch",
                            s.breaks_timed_out,
                            plural(s.breaks_timed_out)
                        );
                    }
                    out
                }
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
                let notes = self.take_notifications_until(Duration::from_millis(ms), stop)?;
                return Ok(notes.iter().map(|n| self.show_notification(n)).collect::<Vec<_>>().join("\n"));
            }
            other => {
                // A name alone is most likely a read of it.
                let mut hint = did_you_mean(other, COMMANDS.iter().copied());
                if hint.is_empty() {
                    let reads: Vec<String> = self.symbols.iter().map(|s| format!("read {}", s.name)).collect();
                    hint = did_you_mean(&format!("read {other}"), reads.iter().map(String::as_str));
                }
                return Err(format!("unknown command `{other}`{hint}; `help` lists the commands"));
            }
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
        let hint = did_you_mean(name, self.symbols.iter().map(|s| s.name.as_str()));
        Err(format!("{} has no state element, probe or counter `{name}`{hint}; `symbols` lists them", self.nf()))
    }

    fn list_symbols(&self) -> String {
        let mut out = String::new();
        for s in &self.symbols {
            let _ = write!(
                out,
                "{:<20} {:<12} {:>6} entr{}",
                s.name,
                kind_name(s),
                s.size,
                if s.size == 1 { "y" } else { "ies" }
            );
            if s.key_width > 0 {
                let _ = write!(out, ", key {} bits", s.key_width);
            }
            let _ = write!(out, ", value {} bits", s.value_width);
            if s.kind == SymbolKind::AutoCounter.code() {
                out.push_str(&if Format::from_code(s.key_format) == Some(Format::DropReason) {
                    ", by drop reason".to_string()
                } else {
                    ", by port".to_string()
                });
            }
            out.push('\n');
        }
        out.trim_end().to_string()
    }

    /// `NAME`, `NAME[INDEX]` or `NAME[key=KEY]`: the symbol, and the index (looked up by key
    /// if need be) with the entry when the key was looked up. An index is checked against the
    /// symbol's size here, so the message can give it.
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
                if s.key_width == 0 {
                    return Err(format!("`{target}`: {} is a {}, not a table: give an index", s.name, kind_name(&s)));
                }
                let text = k[4..].trim();
                let key = parse_value(text, s.key_width, s.key_format)?;
                match self.ask(Request::Lookup { id, key })? {
                    Ok(Reply::Found { index, entry }) => Ok((id, index, Some(entry))),
                    Err(Status::NoSuchKey) => Err(format!("`{target}`: no entry of {} has the key {text}", s.name)),
                    Err(st) => Err(format!("`{target}`: {}", explain(st))),
                    Ok(r) => unexpected(r),
                }
            }
            Some(i) => {
                let index = match DropReason::ALL.iter().find(|r| r.name() == i) {
                    Some(r) if Format::from_code(s.key_format) == Some(Format::DropReason) && s.key_width == 0 => {
                        *r as u32
                    }
                    _ => parse_uint(i, 32).map_err(|e| format!("`{target}`: {e}"))? as u32,
                };
                if index >= s.size {
                    return Err(format!(
                        "`{target}`: {} has {} entr{} (0 to {})",
                        s.name,
                        s.size,
                        if s.size == 1 { "y" } else { "ies" },
                        s.size.saturating_sub(1)
                    ));
                }
                Ok((id, index, None))
            }
        }
    }

    fn read(&mut self, target: &str) -> Result<String, Error> {
        if target.is_empty() {
            return Err("write `read NAME`, `read NAME[INDEX]` or `read NAME[key=KEY]`".into());
        }
        let (id, index, found) = self.place(target)?;
        let entry = match found {
            Some(e) => e,
            None => self.read_entry(id, index)?,
        };
        let s = &self.symbols[id as usize];
        Ok(format!("{} = {}", place_name(s, index), show_entry(s, &entry)))
    }

    fn read_entry(&mut self, id: u16, index: u32) -> Result<Vec<u8>, Error> {
        let name = place_name(&self.symbols[id as usize], index);
        match self.ask(Request::Read { id, index })? {
            Ok(Reply::Entry(e)) => Ok(e),
            Err(s) => Err(format!("read {name}: {}", explain(s))),
            Ok(r) => unexpected(r),
        }
    }

    /// Every entry of a symbol (a table's valid ones, with their slots).
    fn dump(&mut self, name: &str) -> Result<String, Error> {
        if name.is_empty() {
            return Err("write `dump NAME` (`symbols` lists them)".into());
        }
        let (id, s) = self.symbol(name)?;
        let s = s.clone();
        let mut out = String::new();
        let mut empty = 0;
        for index in 0..s.size {
            let e = self.read_entry(id, index)?;
            if s.key_width > 0 && e.first() == Some(&0) {
                empty += 1;
                continue;
            }
            let _ = writeln!(out, "{} = {}", place_name(&s, index), show_entry(&s, &e));
        }
        if s.key_width > 0 {
            let _ = write!(out, "({} of {} slots in use)", s.size - empty, s.size);
        }
        Ok(out.trim_end().to_string())
    }

    fn write(&mut self, rest: &str) -> Result<String, Error> {
        let (target, value) = rest
            .split_once('=')
            .filter(|(t, _)| !t.contains("[key"))
            .or_else(|| rest.split_once("] =").map(|(t, v)| (&rest[..t.len() + 1], v)))
            .ok_or("write `write NAME[INDEX] = VALUE` (a table entry: `= KEY -> VALUE`, or `= empty`)")?;
        let (id, index, _) = self.place(target.trim())?;
        let s = self.symbols[id as usize].clone();
        let place = place_name(&s, index);
        if let Some(why) = read_only(&s) {
            return Err(format!("write {place}: {} is {why}", s.name));
        }
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
        match self.ask(Request::Write { id, index, entry: entry.clone() })? {
            Ok(_) => Ok(format!("{place} = {}", show_entry(&s, &entry))),
            Err(Status::KeyElsewhere) => {
                let key = value.split_once("->").map_or(value, |(k, _)| k.trim());
                let slot = match self.ask(Request::Lookup { id, key: entry[1..1 + bytes_of(s.key_width)].to_vec() })? {
                    Ok(Reply::Found { index, .. }) => format!("{}[{index}]", s.name),
                    _ => "another slot".into(),
                };
                Err(format!(
                    "write {place}: the key {key} is in {slot} already, and a key is in one slot at most: write \
                     {slot}, or empty it first (`write {slot} = empty`)"
                ))
            }
            Err(Status::WrongSet) => {
                let key = value.split_once("->").map_or(value, |(k, _)| k.trim());
                Err(format!(
                    "write {place}: the key {key} hashes to another set of {}: a hash table keeps a key only in the \
                     ways of the set its hash picks",
                    s.name
                ))
            }
            Err(Status::Unsupported) => {
                Err(format!("write {place}: this target's debug unit cannot write a {} yet", kind_name(&s)))
            }
            Err(st) => Err(format!("write {place}: {}", explain(st))),
        }
    }

    fn reset(&mut self, rest: &str) -> Result<String, Error> {
        let id = match rest {
            "" => return Err("write `reset NAME` (a counter) or `reset all`".into()),
            "all" => None,
            name => {
                let (id, s) = self.symbol(name)?;
                if s.kind == SymbolKind::AutoCounter.code() {
                    return Err(format!("reset {name}: {name} is counted by the target itself and cannot be reset"));
                }
                if s.kind != SymbolKind::Counter.code() {
                    return Err(format!(
                        "reset {name}: {name} is a {}, not a counter: `reset` zeroes counters (`counters` lists them)",
                        kind_name(s)
                    ));
                }
                Some(id)
            }
        };
        match self.ask(Request::ResetCounters { id })? {
            Ok(_) => Ok(format!("reset {rest}")),
            Err(s) => Err(format!("reset {rest}: {}", explain(s))),
        }
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
        let request = Request::Watch { slot: ANY_SLOT, id, index, op, operand: operand.clone(), record };
        match self.ask(request)? {
            Ok(Reply::Watch { slot }) => {
                Ok(self.show_watch(&WatchInfo { slot, id, index, op, operand, record: false }))
            }
            Ok(r) => unexpected(r),
            Err(Status::NoSlot) => Err(format!(
                "watch: every watch slot ({}) is armed: `watches` lists them, `unwatch SLOT` frees one",
                self.hello.watch_slots
            )),
            Err(Status::Unsupported) => Err(format!(
                "watch {target}: this target's debug unit watches registers and counters of up to 64 bits, and {} \
                 is a {}",
                s.name,
                kind_name(&s)
            )),
            Err(st) => Err(format!("watch {target}: {}", explain(st))),
        }
    }

    /// `watch 0: floods >= 4`, as `watch` and `watches` show it.
    fn show_watch(&self, w: &WatchInfo) -> String {
        let Some(s) = self.symbols.get(w.id as usize) else { return format!("watch {}: symbol {}", w.slot, w.id) };
        let mut out = format!("watch {}: {} {}", w.slot, place_name(s, w.index), w.op);
        if w.op != WatchOp::Changes {
            let _ = write!(out, " {}", show_value(&w.operand, s.value_format));
        }
        if w.record {
            out.push_str(" record");
        }
        out
    }

    fn armed(&mut self) -> Result<Vec<WatchInfo>, Error> {
        match self.request(Request::Watches)? {
            Reply::Watches(ws) => Ok(ws),
            r => unexpected(r),
        }
    }

    fn watches(&mut self) -> Result<String, Error> {
        let ws = self.armed()?;
        if ws.is_empty() {
            return Ok(format!("no watch is armed ({} slots)", self.hello.watch_slots));
        }
        Ok(ws.iter().map(|w| self.show_watch(w)).collect::<Vec<_>>().join("\n"))
    }

    fn unwatch(&mut self, rest: &str) -> Result<String, Error> {
        let slot = match rest {
            "all" => None,
            _ => {
                let last = self.hello.watch_slots.saturating_sub(1);
                let k = parse_uint(rest, 8)
                    .ok()
                    .filter(|&k| k <= last as u128)
                    .ok_or_else(|| format!("unwatch {rest}: write `unwatch SLOT` (0 to {last}) or `unwatch all`"))?
                    as u8;
                if !self.armed()?.iter().any(|w| w.slot == k) {
                    return Err(format!("unwatch {k}: watch {k} is not armed; `watches` lists the armed ones"));
                }
                Some(k)
            }
        };
        self.request(Request::Unwatch { slot })?;
        Ok(format!("unwatched {rest}"))
    }

    fn trace(&mut self, rest: &str) -> Result<String, Error> {
        let mut words = rest.split_whitespace();
        let on = match words.next() {
            Some("on") => true,
            Some("off") => false,
            _ => return Err("write `trace on [SNAP_BYTES]` or `trace off`".into()),
        };
        let snap = match words.next() {
            None => crate::protocol::DEFAULT_SNAP,
            Some(w) => match w.parse::<u16>() {
                Ok(n) if n <= MAX_SNAP => n,
                _ => return Err(format!("trace on {w}: the snap length is a byte count from 0 to {MAX_SNAP}")),
            },
        };
        self.request(Request::Trace { on, snap })?;
        Ok(match on {
            false => "trace off".into(),
            true if snap > self.hello.max_snap => format!(
                "trace on (the first {} bytes of each packet: this target records no more)",
                self.hello.max_snap
            ),
            true => format!("trace on (the first {snap} bytes of each packet)"),
        })
    }

    fn show_notification(&self, n: &Notification) -> String {
        match n {
            Notification::WatchHit { slot, id, index, packet_no, value, packet } => {
                let s = &self.symbols.get(*id as usize);
                let name = s.map_or("?", |s| s.name.as_str());
                let shown = s.map_or_else(|| hex(value), |s| show_entry(s, value));
                let place = s.map_or_else(|| format!("{name}[{index}]"), |s| place_name(s, *index));
                let mut out = format!("watch {slot} hit: {place} = {shown} after packet {packet_no}");
                if let Some((port, bytes)) = packet {
                    let _ = write!(out, " (in port {port}: {})", hex(bytes));
                }
                out
            }
            Notification::Trace { packet_no, in_port, verdict, latency, len, bytes } => {
                let v = match verdict {
                    TraceVerdict::Drop(r) => {
                        format!("dropped ({})", DropReason::from_code(*r).map_or(format!("reason {r}"), |r| r.name().into()))
                    }
                    TraceVerdict::Send(mask) => {
                        let ports: Vec<String> =
                            (0..32).filter(|p| mask >> p & 1 == 1).map(|p| p.to_string()).collect();
                        format!("sent to port{} {}", if ports.len() == 1 { "" } else { "s" }, ports.join(","))
                    }
                };
                let unit = if self.hello.latency_in_cycles { "cycles" } else { "ns" };
                // A hardware unit records no bytes.
                let first = if bytes.is_empty() { String::new() } else { format!(": {}", hex(bytes)) };
                format!("trace: packet {packet_no}, in port {in_port}, {len} bytes, {v}, latency {latency} {unit}{first}")
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
dump NAME                        every entry (a table's slots in use)
write NAME[INDEX] = VALUE        a register, counter or array entry; a table entry: = KEY -> VALUE, or = empty
counters                         every counter
reset NAME | all                 zero a counter, or all
watch NAME[INDEX] OP VALUE       notify when the entry's value becomes OP VALUE (== != < <= > >=); add `record`
watch NAME[INDEX] changes        notify on every change; add `record` to get the packet that did it
watches                          the armed watches, by slot (any session's)
unwatch SLOT | all               disarm watches
trace on [SNAP] | off            a record of every packet (its first SNAP bytes, default 64) and verdict
break | step [N] | continue      hold packets at the input; release N; release all and run
status                           running or broken, packets held, watch hits
wait [MS]                        show notifications arriving within MS milliseconds (default 500; Ctrl-C ends it)
quit                             leave (Ctrl-D too)";

/// The kind's name, as `symbols` shows it.
fn kind_name(s: &SymbolInfo) -> &'static str {
    SymbolKind::from_code(s.kind).map_or("?", SymbolKind::name)
}

/// Why symbol `s` cannot be written, if it cannot.
fn read_only(s: &SymbolInfo) -> Option<&'static str> {
    match SymbolKind::from_code(s.kind)? {
        SymbolKind::AutoCounter => Some("counted by the target itself: read only"),
        SymbolKind::Queue => Some("a queue: read only (the NF pushes and pops it)"),
        SymbolKind::Probe => Some("a probe: read only (the NF sets it)"),
        _ => None,
    }
}

/// ` (did you mean NAME?)` for the closest of `names` to `word` (a typo's distance), or "".
fn did_you_mean<'a>(word: &str, names: impl Iterator<Item = &'a str>) -> String {
    let best = names
        .map(|n| (edit_distance(word, n), n))
        .filter(|&(d, n)| d <= (n.len().max(word.len()) / 3).max(1) || n.contains(word) && word.len() >= 3)
        .min_by_key(|&(d, _)| d);
    best.map_or(String::new(), |(_, n)| format!(" (did you mean `{n}`?)"))
}

/// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// `name[index]`, or `name` for a one-entry symbol (a register, a counter); a counter by
/// drop reason shows the reason's name.
fn place_name(s: &SymbolInfo, index: u32) -> String {
    if s.size == 1 && index == 0 {
        return s.name.clone();
    }
    match DropReason::from_code(index as u8) {
        Some(r) if s.key_width == 0 && Format::from_code(s.key_format) == Some(Format::DropReason) && index < 256 => {
            format!("{}[{}]", s.name, r.name())
        }
        _ => format!("{}[{index}]", s.name),
    }
}

fn unexpected<R>(r: Reply) -> Result<R, Error> {
    Err(format!("the unit answered with an unexpected reply: {r:?}"))
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A refusal in words, where the command did not say it more exactly itself.
fn explain(s: Status) -> String {
    let why = match s {
        Status::NoSuchSymbol => "no such symbol (the symbol table changed? reconnect)",
        Status::BadIndex => "the index is past the element's size",
        Status::BadValue => "the unit refused the value: wider than the element, or not one it can hold",
        Status::ReadOnly => "this element is read only",
        Status::NoSuchKey => "the key is not in the table",
        Status::NoSlot => "every watch slot is armed (`watches` lists them, `unwatch SLOT` frees one)",
        Status::NotBroken => "running, nothing is held: `break` first",
        Status::Busy => "the hardware was busy with a frame at every try; try again",
        Status::Unsupported => "this target's debug unit cannot do that yet",
        Status::KeyElsewhere => "the key is in another slot already",
        Status::WrongSet => "the key hashes to another set",
        Status::NotACounter => "not a counter",
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

/// A MAC address in any of the common notations: `02:00:5e:10:00:01`, `02-00-5e-10-00-01`,
/// `0200.5e10.0001` (Cisco's), or 12 hex digits.
fn parse_mac(text: &str) -> Option<Vec<u8>> {
    let digits: String = match () {
        _ if text.contains(':') || text.contains('-') => {
            let parts: Vec<&str> = text.split([':', '-']).collect();
            if parts.len() != 6 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
                return None;
            }
            parts.iter().map(|p| format!("{p:0>2}")).collect()
        }
        _ if text.contains('.') => {
            let parts: Vec<&str> = text.split('.').collect();
            if parts.len() != 3 || parts.iter().any(|p| p.len() != 4) {
                return None;
            }
            parts.concat()
        }
        _ if text.len() == 12 && !text.starts_with("0x") => text.to_string(),
        _ => return None,
    };
    (digits.len() == 12 && digits.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| (0..6).map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).expect("hex")).collect())
}

/// Reads `text` as a value of `width` bits shown as `format` (a MAC, an address, a number,
/// hex), big-endian in the protocol's byte count.
pub fn parse_value(text: &str, width: u16, format: u8) -> Result<Vec<u8>, Error> {
    let n = bytes_of(width);
    let format = Format::from_code(format);
    if format == Some(Format::Mac) && n == 6 {
        return parse_mac(text).ok_or_else(|| {
            format!("`{text}` is not a MAC address (write 02:00:5e:10:00:01, 02-00-5e-10-00-01 or 0200.5e10.0001)")
        });
    }
    if text.contains(':') && n == 6 {
        if let Some(m) = parse_mac(text) {
            return Ok(m);
        }
    }
    if text.matches('.').count() == 3 && n == 4 {
        let a: std::net::Ipv4Addr = text.parse().map_err(|_| format!("`{text}` is not an IPv4 address"))?;
        return Ok(a.octets().to_vec());
    }
    if format == Some(Format::Bool) {
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
        same_port_drops: u64,
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
                SymbolInfo {
                    kind: SymbolKind::AutoCounter.code(),
                    size: 256,
                    key_width: 0,
                    value_width: 64,
                    key_format: Format::DropReason.code(),
                    value_format: 0,
                    name: "drops".into(),
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
                (2, i) if i < 256 => {
                    Ok(if i == DropReason::SamePort as u32 { self.same_port_drops } else { 0 }.to_be_bytes().to_vec())
                }
                _ => Err(Status::BadIndex),
            }
        }
        fn write(&mut self, id: u16, index: u32, e: &[u8]) -> Result<(), Status> {
            match (id, index) {
                (0, i) if i < 4 && e.len() == 8 => {
                    let key: [u8; 6] = e[1..7].try_into().unwrap();
                    if e[0] == 1 && self.table.iter().enumerate().any(|(j, t)| j != i as usize && t.0 && t.1 == key) {
                        return Err(Status::KeyElsewhere);
                    }
                    self.table[i as usize] = (e[0] == 1, key, e[7])
                }
                (2, _) => return Err(Status::ReadOnly),
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

    /// Every refusal, word for word: which rule the command broke, and the limit it met.
    #[test]
    fn mistakes_say_exactly_what_is_wrong() {
        let (mut c, shared) = connected();
        let err = |c: &mut Client<Loop>, line: &str| c.exec(line).unwrap_err();
        assert_eq!(
            err(&mut c, "read flods"),
            "learning_switch has no state element, probe or counter `flods` (did you mean `floods`?); `symbols` lists them"
        );
        assert_eq!(err(&mut c, "read mac[1]"), "learning_switch has no state element, probe or counter `mac` (did you mean `mac_table`?); `symbols` lists them");
        assert_eq!(err(&mut c, "wacth floods changes"), "unknown command `wacth` (did you mean `watch`?); `help` lists the commands");
        assert_eq!(err(&mut c, "frobnicate"), "unknown command `frobnicate`; `help` lists the commands");
        assert_eq!(err(&mut c, "flods"), "unknown command `flods` (did you mean `read floods`?); `help` lists the commands");
        assert_eq!(err(&mut c, "read mac_table[9]"), "`mac_table[9]`: mac_table has 4 entries (0 to 3)");
        assert_eq!(
            err(&mut c, "read mac_table[key=02:00:00:00:00:01]"),
            "`mac_table[key=02:00:00:00:00:01]`: no entry of mac_table has the key 02:00:00:00:00:01"
        );
        assert_eq!(err(&mut c, "read floods[key=1]"), "`floods[key=1]`: floods is a counter, not a table: give an index");
        assert_eq!(err(&mut c, "write floods = 0x1_0000_0000_0000_0000"), "`0x1_0000_0000_0000_0000` does not fit in 64 bits");
        assert_eq!(
            err(&mut c, "write mac_table[1] = 02:00:00:00:00:0g -> 1"),
            "`02:00:00:00:00:0g` is not a MAC address (write 02:00:5e:10:00:01, 02-00-5e-10-00-01 or 0200.5e10.0001)"
        );
        // A key is in one slot at most: the message names the slot that has it.
        c.exec("write mac_table[0] = 02-00-00-00-00-11 -> 1").unwrap();
        assert_eq!(
            err(&mut c, "write mac_table[2] = 0200.0000.0011 -> 3"),
            "write mac_table[2]: the key 0200.0000.0011 is in mac_table[0] already, and a key is in one slot at most: \
             write mac_table[0], or empty it first (`write mac_table[0] = empty`)"
        );
        assert_eq!(shared.borrow().1.table[2].0, false, "nothing written");
        assert_eq!(err(&mut c, "write drops[same_port] = 0"), "write drops[same_port]: drops is counted by the target itself: read only");
        assert_eq!(
            err(&mut c, "reset mac_table"),
            "reset mac_table: mac_table is a cam, not a counter: `reset` zeroes counters (`counters` lists them)"
        );
        assert_eq!(err(&mut c, "reset drops"), "reset drops: drops is counted by the target itself and cannot be reset");
        assert_eq!(err(&mut c, "trace on 2000"), "trace on 2000: the snap length is a byte count from 0 to 1400");
        assert_eq!(err(&mut c, "step"), "step: running, nothing is held: `break` first");
        assert_eq!(err(&mut c, "step -1"), "step -1: write `step N`, N a packet count from 1 to 65535");
        assert_eq!(err(&mut c, "watch floods ~ 3"), "`~` is not a comparison; write `watch NAME[INDEX] OP VALUE [record]` (OP one of == != < <= > >=) or `watch NAME[INDEX] changes [record]`");
        assert_eq!(err(&mut c, "unwatch 3"), "unwatch 3: watch 3 is not armed; `watches` lists the armed ones");
        assert_eq!(err(&mut c, "unwatch 8"), "unwatch 8: write `unwatch SLOT` (0 to 7) or `unwatch all`");
        for k in 0..8 {
            assert_eq!(c.exec(&format!("watch floods == {k}")).unwrap(), format!("watch {k}: floods == {k}"));
        }
        assert_eq!(
            err(&mut c, "watch floods changes"),
            "watch: every watch slot (8) is armed: `watches` lists them, `unwatch SLOT` frees one"
        );
    }

    /// Drop reasons by name, latencies with their unit, MACs in every notation.
    #[test]
    fn figures_carry_their_names_and_units() {
        let (mut c, shared) = connected();
        shared.borrow_mut().1.same_port_drops = 3;
        assert_eq!(c.exec("counters").unwrap(), "floods = 0\ndrops[same_port] = 3");
        assert_eq!(c.exec("read drops[same_port]").unwrap(), "drops[same_port] = 3");
        assert!(c.exec("symbols").unwrap().ends_with("drops                auto_counter    256 entries, value 64 bits, by drop reason"));
        c.exec("trace on 16").unwrap();
        {
            let mut u = shared.borrow_mut();
            let (unit, nf) = &mut *u;
            let verdict = TraceVerdict::Drop(DropReason::SamePort as u8);
            unit.observe(&Outcome { packet_no: 4, in_port: 1, bytes: &[7; 60], verdict, latency: 812 }, nf);
        }
        assert_eq!(
            c.exec("wait 10").unwrap(),
            "trace: packet 4, in port 1, 60 bytes, dropped (same_port), latency 812 ns: 07070707070707070707070707070707"
        );
        for mac in ["86:a1:29:d8:68:cf", "86-A1-29-D8-68-CF", "86a1.29d8.68cf", "86a129d868cf"] {
            assert_eq!(c.exec(&format!("write mac_table[3] = {mac} -> 2")).unwrap(), "mac_table[3] = 86:a1:29:d8:68:cf -> 2");
        }
        assert_eq!(c.exec("dump mac_table").unwrap(), "mac_table[3] = 86:a1:29:d8:68:cf -> 2\n(1 of 4 slots in use)");
    }

    /// Two sessions, one after the other as `emu dbg --exec` runs them: the second's watch
    /// takes a free slot, the first's still fires, and `watches` lists both.
    #[test]
    fn sessions_do_not_overwrite_each_others_watches() {
        let (mut first, shared) = connected();
        assert_eq!(first.exec("watch floods >= 1").unwrap(), "watch 0: floods >= 1");
        drop(first);
        let mut second = Client::connect(Loop { unit: shared.clone(), inbox: VecDeque::new() }, 5000).unwrap();
        assert_eq!(second.exec("watch mac_table[2] changes record").unwrap(), "watch 1: mac_table[2] changes");
        assert_eq!(second.exec("watches").unwrap(), "watch 0: floods >= 1\nwatch 1: mac_table[2] changes record");
        flood(&shared, 0);
        assert_eq!(second.exec("wait 10").unwrap(), "watch 0 hit: floods = 1 after packet 0");
        assert_eq!(second.exec("unwatch 0").unwrap(), "unwatched 0");
        assert_eq!(second.exec("watches").unwrap(), "watch 1: mac_table[2] changes record");
        assert_eq!(second.exec("unwatch all").unwrap(), "unwatched all");
        assert_eq!(second.exec("watches").unwrap(), "no watch is armed (8 slots)");
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
