//! Reads the text form [`print`](super::print) writes, so tests (golden files, the scheduler's
//! and back end's fixtures) can state a function as text.
//!
//! Value and block numbers are kept as written (`v7` is `Value` 7), so a printed function
//! reads back to one that prints identically. `;` starts a comment. The result is not
//! verified: call [`verify`](super::verify()) for that.

use super::bits::BitVec;
use super::entity::EntityRef;
use super::function::{
    ActionExpr, Block, BlockCall, Function, InstData, StateId, StateKind, StateRole, Terminator, Value, ValueData,
    ValueDef,
};
use super::op::{Addr, BinaryOp, CastOp, CmpOp, MetaField, Op, StateOp, SumScope, UnaryOp};
use super::types::Type;
use core::fmt;
use emu_core::DropReason;

/// A syntax error: the line (from 1) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Line number, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    P(char),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) | Tok::Num(s) => write!(f, "`{s}`"),
            Tok::P(c) => write!(f, "`{c}`"),
        }
    }
}

fn lex(line: &str) -> Result<Vec<Tok>, String> {
    let line = line.split(';').next().unwrap_or("");
    let mut toks = Vec::new();
    let cs: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_' || cs[i] == '.') {
                i += 1;
            }
            toks.push(Tok::Ident(cs[s..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let s = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            toks.push(Tok::Num(cs[s..i].iter().collect()));
        } else if "(){}:,=<>+".contains(c) {
            toks.push(Tok::P(c));
            i += 1;
        } else {
            return Err(format!("unexpected character `{c}`"));
        }
    }
    Ok(toks)
}

/// A number of up to 256 bits from `0x` hexadecimal text, or up to 128 bits from decimal.
fn number(s: &str) -> Result<BitVec, String> {
    let clean = s.replace('_', "");
    let bad = || format!("`{s}` is not a number");
    match clean.strip_prefix("0x") {
        Some(h) => {
            let h = h.trim_start_matches('0');
            if h.len() > 64 {
                return Err(format!("`{s}` does not fit in 256 bits"));
            }
            let mut words = [0u64; 4];
            for (i, ch) in h.chars().rev().enumerate() {
                let d = ch.to_digit(16).ok_or_else(bad)? as u64;
                words[i / 16] |= d << (4 * (i % 16));
            }
            Ok(BitVec::from_words(256, words))
        }
        None => {
            let v: u128 = clean.parse().map_err(|_| {
                if clean.chars().all(|c| c.is_ascii_digit()) {
                    format!("`{s}` is too large for decimal; write it in hexadecimal (0x…)")
                } else {
                    bad()
                }
            })?;
            Ok(BitVec::from_u128(256, v))
        }
    }
}

struct Cur {
    toks: Vec<Tok>,
    pos: usize,
}

impl Cur {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self, what: &str) -> Result<Tok, String> {
        let t = self.toks.get(self.pos).cloned().ok_or_else(|| format!("expected {what} at the end of the line"))?;
        self.pos += 1;
        Ok(t)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::P(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn punct(&mut self, c: char) -> Result<(), String> {
        match self.next(&format!("`{c}`"))? {
            Tok::P(p) if p == c => Ok(()),
            t => Err(format!("expected `{c}`, found {t}")),
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, String> {
        match self.next(what)? {
            Tok::Ident(s) => Ok(s),
            t => Err(format!("expected {what}, found {t}")),
        }
    }

    fn num(&mut self, what: &str) -> Result<BitVec, String> {
        match self.next(what)? {
            Tok::Num(s) => number(&s),
            t => Err(format!("expected {what}, found {t}")),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let n = self.num(what)?;
        u32::try_from(n.to_u64_saturating()).map_err(|_| format!("{what} {n} is too large"))
    }

    fn prefixed(&mut self, prefix: &str, what: &str) -> Result<u32, String> {
        let s = self.ident(what)?;
        s.strip_prefix(prefix)
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| format!("expected {what}, found `{s}`"))
    }

    fn value(&mut self) -> Result<Value, String> {
        self.prefixed("v", "a value (`v3`)").map(Value::from_u32)
    }

    fn block(&mut self) -> Result<Block, String> {
        self.prefixed("block", "a block (`block2`)").map(Block::from_u32)
    }

    fn ty(&mut self) -> Result<Type, String> {
        let w = self.prefixed("u", "a type (`u16`)")?;
        u16::try_from(w).map(Type::uint).map_err(|_| format!("type u{w} is too wide"))
    }

    fn comma(&mut self) -> Result<(), String> {
        self.punct(',')
    }

    fn end(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(format!("unexpected {t} at the end of the line")),
        }
    }

    fn is_value_def(&self) -> bool {
        matches!((self.toks.get(self.pos), self.toks.get(self.pos + 1)),
            (Some(Tok::Ident(s)), Some(Tok::P(':'))) if s.starts_with('v') && s[1..].parse::<u32>().is_ok())
    }
}

struct Parser {
    func: Function,
    current: Option<Block>,
}

/// Reads a function from its text form.
pub fn parse(text: &str) -> Result<Function, ParseError> {
    let mut p = Parser { func: Function::new("", 0), current: None };
    let mut started = false;
    let mut ended = false;
    for (n, line) in text.lines().enumerate() {
        let err = |message: String| ParseError { line: n + 1, message };
        let toks = lex(line).map_err(err)?;
        if toks.is_empty() {
            continue;
        }
        if ended {
            return Err(err("text after the function's closing `}`".into()));
        }
        let mut c = Cur { toks, pos: 0 };
        if !started {
            p.header(&mut c).map_err(err)?;
            started = true;
            continue;
        }
        if c.toks == [Tok::P('}')] {
            ended = true;
            continue;
        }
        p.line(&mut c).map_err(err)?;
    }
    if !started {
        return Err(ParseError { line: 1, message: "expected `fn name(window=N) {`".into() });
    }
    if !ended {
        return Err(ParseError { line: text.lines().count(), message: "the function has no closing `}`".into() });
    }
    Ok(p.func)
}

impl Parser {
    fn header(&mut self, c: &mut Cur) -> Result<(), String> {
        if c.ident("`fn`")? != "fn" {
            return Err("expected `fn name(window=N) {`".into());
        }
        self.func.name = c.ident("the function's name")?;
        c.punct('(')?;
        if c.ident("`window`")? != "window" {
            return Err("expected `window=N`".into());
        }
        c.punct('=')?;
        self.func.window = c.u32("the window size")?;
        c.punct(')')?;
        c.punct('{')?;
        c.end()
    }

    /// Makes sure value `v` has an arena slot, filling holes with detached placeholders.
    fn slot(&mut self, v: Value) {
        while self.func.values.len() <= v.index() {
            self.func.values.push(ValueData { ty: Type::uint(0), def: ValueDef::Detached });
        }
    }

    fn define(&mut self, v: Value, ty: Type, def: ValueDef) -> Result<(), String> {
        self.slot(v);
        if self.func.values[v].def != ValueDef::Detached {
            return Err(format!("{v} is defined twice"));
        }
        self.func.values[v] = ValueData { ty, def };
        Ok(())
    }

    fn state(&self, c: &mut Cur) -> Result<StateId, String> {
        let name = c.ident("a state element's name")?;
        self.func.state_by_name(&name).ok_or_else(|| format!("no state element is called `{name}`"))
    }

    fn line(&mut self, c: &mut Cur) -> Result<(), String> {
        let first = match c.peek() {
            Some(Tok::Ident(s)) => s.clone(),
            Some(t) => return Err(format!("unexpected {t}")),
            None => return Ok(()),
        };
        if first == "state" {
            c.pos += 1;
            let name = c.ident("the state element's name")?;
            c.punct(':')?;
            let kind = c.ident("a state kind (counter, register, array, cam, lru, hash_table, tcam, queue)")?;
            c.punct('<')?;
            let kind = match kind.as_str() {
                "counter" => StateKind::Counter { bits: c.ty()?.width() },
                "register" => StateKind::Register { ty: c.ty()? },
                "array" => {
                    let ty = c.ty()?;
                    c.comma()?;
                    StateKind::Array { ty, size: c.u32("the array's size")? }
                }
                "cam" => {
                    let key = c.ty()?;
                    c.comma()?;
                    let value = c.ty()?;
                    c.comma()?;
                    StateKind::Cam { key, value, size: c.u32("the cam's size")? }
                }
                "lru" | "tcam" => {
                    let key = c.ty()?;
                    c.comma()?;
                    let value = c.ty()?;
                    c.comma()?;
                    let size = c.u32("the number of slots")?;
                    if kind == "lru" {
                        let ways = if c.eat(',') { c.u32("the number of ways")? } else { size };
                        StateKind::Lru { key, value, size, ways }
                    } else {
                        StateKind::Tcam { key, value, size }
                    }
                }
                "hash_table" => {
                    let key = c.ty()?;
                    c.comma()?;
                    let value = c.ty()?;
                    c.comma()?;
                    let size = c.u32("the hash table's size")?;
                    c.comma()?;
                    StateKind::HashTable { key, value, size, ways: c.u32("the number of ways")? }
                }
                "queue" => {
                    let ty = c.ty()?;
                    c.comma()?;
                    StateKind::Queue { ty, size: c.u32("the queue's size")? }
                }
                k => {
                    return Err(format!(
                        "unknown state kind `{k}`; write counter, register, array, cam, lru, hash_table, tcam or queue"
                    ))
                }
            };
            c.punct('>')?;
            let role = match c.toks.get(c.pos) {
                Some(Tok::Ident(r)) if r == "probe" || r == "count" => {
                    c.pos += 1;
                    if r == "probe" {
                        StateRole::Probe
                    } else {
                        StateRole::Count
                    }
                }
                _ => StateRole::Field,
            };
            c.end()?;
            if self.func.state_by_name(&name).is_some() {
                return Err(format!("state element `{name}` is declared twice"));
            }
            let id = self.func.add_state(&name, kind);
            self.func.states[id].role = role;
            return Ok(());
        }
        if first.starts_with("block") && matches!(c.toks.get(1), Some(Tok::P(':' | '('))) {
            let b = c.block()?;
            while self.func.blocks.len() <= b.index() {
                self.func.blocks.push(Default::default());
            }
            if self.func.layout.contains(&b) {
                return Err(format!("{b} is defined twice"));
            }
            self.func.layout.push(b);
            if c.eat('(') {
                loop {
                    let v = c.value()?;
                    c.punct(':')?;
                    let ty = c.ty()?;
                    let n = self.func.blocks[b].params.len() as u16;
                    self.define(v, ty, ValueDef::Param(b, n))?;
                    self.func.blocks[b].params.push(v);
                    if !c.eat(',') {
                        break;
                    }
                }
                c.punct(')')?;
            }
            c.punct(':')?;
            c.end()?;
            self.current = Some(b);
            return Ok(());
        }
        let b = self.current.ok_or("an instruction outside a block; start one with `block0:`")?;
        if self.func.blocks[b].term.is_some() {
            return Err(format!("{b} already ended with its terminator"));
        }
        match first.as_str() {
            "jump" | "br" | "return" => {
                c.pos += 1;
                let t = self.terminator(&first, c)?;
                c.end()?;
                self.func.blocks[b].term = Some(t);
                return Ok(());
            }
            _ => {}
        }
        // results = op operands
        let mut results = Vec::new();
        if c.is_value_def() {
            loop {
                let v = c.value()?;
                c.punct(':')?;
                results.push((v, c.ty()?));
                if !c.eat(',') {
                    break;
                }
            }
            c.punct('=')?;
        }
        let name = c.ident("an operation")?;
        let result_width = |n: usize| -> Result<u16, String> {
            results
                .first()
                .map(|r| r.1.width())
                .filter(|_| results.len() == n)
                .ok_or_else(|| format!("`{name}` gives one result; write `vN:uW = {name} …`"))
        };
        let op = self.op(&name, c, &result_width)?;
        c.end()?;
        let inst = self.func.insts.push(InstData { op, results: results.iter().map(|r| r.0).collect() });
        for (n, (v, ty)) in results.into_iter().enumerate() {
            self.define(v, ty, ValueDef::Result(inst, n as u16))?;
        }
        self.func.blocks[b].insts.push(inst);
        Ok(())
    }

    fn addr(c: &mut Cur) -> Result<Addr, String> {
        match c.peek() {
            Some(Tok::Num(_)) => Ok(Addr::at(c.u32("a byte offset")?)),
            _ => {
                let base = c.value()?;
                let offset = if c.eat('+') { c.u32("a byte offset")? } else { 0 };
                Ok(Addr::dynamic(base, offset))
            }
        }
    }

    fn op(&self, name: &str, c: &mut Cur, width: &dyn Fn(usize) -> Result<u16, String>) -> Result<Op, String> {
        macro_rules! two {
            ($mk:expr) => {{
                let a = c.value()?;
                c.comma()?;
                let b = c.value()?;
                $mk(a, b)
            }};
        }
        Ok(match name {
            "const" => {
                let w = width(1)?;
                let n = c.num("a constant")?;
                if !n.lshr(w as u64).is_zero() && w < 256 {
                    return Err(format!("constant {n} does not fit in u{w}"));
                }
                Op::Const(n.resize(w))
            }
            "not" => Op::Unary(UnaryOp::Not, c.value()?),
            "neg" => Op::Unary(UnaryOp::Neg, c.value()?),
            "add" => two!(|a, b| Op::Binary(BinaryOp::Add, a, b)),
            "sub" => two!(|a, b| Op::Binary(BinaryOp::Sub, a, b)),
            "mul" => two!(|a, b| Op::Binary(BinaryOp::Mul, a, b)),
            "and" => two!(|a, b| Op::Binary(BinaryOp::And, a, b)),
            "or" => two!(|a, b| Op::Binary(BinaryOp::Or, a, b)),
            "xor" => two!(|a, b| Op::Binary(BinaryOp::Xor, a, b)),
            "shl" => two!(|a, b| Op::Binary(BinaryOp::Shl, a, b)),
            "lshr" => two!(|a, b| Op::Binary(BinaryOp::Lshr, a, b)),
            "ashr" => two!(|a, b| Op::Binary(BinaryOp::Ashr, a, b)),
            "eq" => two!(|a, b| Op::Cmp(CmpOp::Eq, a, b)),
            "ne" => two!(|a, b| Op::Cmp(CmpOp::Ne, a, b)),
            "ult" => two!(|a, b| Op::Cmp(CmpOp::Ult, a, b)),
            "ule" => two!(|a, b| Op::Cmp(CmpOp::Ule, a, b)),
            "ugt" => two!(|a, b| Op::Cmp(CmpOp::Ugt, a, b)),
            "uge" => two!(|a, b| Op::Cmp(CmpOp::Uge, a, b)),
            "slt" => two!(|a, b| Op::Cmp(CmpOp::Slt, a, b)),
            "sle" => two!(|a, b| Op::Cmp(CmpOp::Sle, a, b)),
            "sgt" => two!(|a, b| Op::Cmp(CmpOp::Sgt, a, b)),
            "sge" => two!(|a, b| Op::Cmp(CmpOp::Sge, a, b)),
            "zext" => Op::Cast(CastOp::Zext, c.value()?, width(1)?),
            "sext" => Op::Cast(CastOp::Sext, c.value()?, width(1)?),
            "trunc" => Op::Cast(CastOp::Trunc, c.value()?, width(1)?),
            "select" => {
                let cond = c.value()?;
                c.comma()?;
                two!(|a, b| Op::Select(cond, a, b))
            }
            "slice" => {
                let a = c.value()?;
                c.comma()?;
                let lo = c.u32("the lowest bit")?;
                Op::Slice(a, u16::try_from(lo).map_err(|_| "slice offset too large")?, width(1)?)
            }
            "concat" => two!(Op::Concat),
            "pkt.read" => {
                let addr = Self::addr(c)?;
                c.comma()?;
                let n = c.u32("a byte count")?;
                Op::PktRead(addr, u16::try_from(n).map_err(|_| "too many bytes")?)
            }
            "pkt.write" => {
                let addr = Self::addr(c)?;
                c.comma()?;
                Op::PktWrite(addr, c.value()?)
            }
            "pkt.len" => Op::PktLen,
            "pkt.set_len" => Op::PktSetLen(c.value()?),
            "meta.in_port" => Op::Meta(MetaField::InPort),
            "meta.len" => Op::Meta(MetaField::Len),
            "meta.timestamp" => Op::Meta(MetaField::Timestamp),
            "pkt.sum" => two!(|a, b| Op::OnesSum(SumScope::Frame, a, b)),
            "pkt.window_sum" => two!(|a, b| Op::OnesSum(SumScope::Window, a, b)),
            "csum.fold" => Op::CsumFold(c.value()?),
            _ => {
                if !StateOp::NAMES.contains(&name) {
                    return Err(format!("unknown operation `{name}`"));
                }
                let s = self.state(c)?;
                let mut arg = || -> Result<Value, String> {
                    c.comma()?;
                    c.value()
                };
                let op = match name {
                    "counter.inc" => StateOp::CounterInc,
                    "counter.add" => StateOp::CounterAdd(arg()?),
                    "counter.set" => StateOp::CounterSet(arg()?),
                    "counter.get" => StateOp::CounterGet,
                    "reg.get" => StateOp::RegGet,
                    "reg.set" => StateOp::RegSet(arg()?),
                    "array.get" => StateOp::ArrayGet(arg()?),
                    "array.set" => {
                        let i = arg()?;
                        StateOp::ArraySet(i, arg()?)
                    }
                    "cam.get" => StateOp::CamGet(arg()?),
                    "cam.contains" => StateOp::CamContains(arg()?),
                    "cam.insert" => {
                        let k = arg()?;
                        StateOp::CamInsert(k, arg()?)
                    }
                    "cam.remove" => StateOp::CamRemove(arg()?),
                    "lru.get" => StateOp::LruGet(arg()?),
                    "lru.peek" => StateOp::LruPeek(arg()?),
                    "lru.contains" => StateOp::LruContains(arg()?),
                    "lru.insert" => {
                        let k = arg()?;
                        StateOp::LruInsert(k, arg()?)
                    }
                    "lru.remove" => StateOp::LruRemove(arg()?),
                    "hash_table.get" => StateOp::HashGet(arg()?),
                    "hash_table.contains" => StateOp::HashContains(arg()?),
                    "hash_table.insert" => {
                        let k = arg()?;
                        StateOp::HashInsert(k, arg()?)
                    }
                    "hash_table.remove" => StateOp::HashRemove(arg()?),
                    "tcam.lookup" => StateOp::TcamLookup(arg()?),
                    "tcam.lookup_slot" => StateOp::TcamLookupSlot(arg()?),
                    "tcam.set" => {
                        let i = arg()?;
                        let v = arg()?;
                        let m = arg()?;
                        StateOp::TcamSet(i, v, m, arg()?)
                    }
                    "tcam.clear" => StateOp::TcamClear(arg()?),
                    "queue.push" => StateOp::QueuePush(arg()?),
                    "queue.pop" => StateOp::QueuePop,
                    "queue.peek" => StateOp::QueuePeek,
                    "queue.len" => StateOp::QueueLen,
                    "queue.is_empty" => StateOp::QueueIsEmpty,
                    "queue.is_full" => StateOp::QueueIsFull,
                    _ => return Err(format!("unknown operation `{name}`")),
                };
                Op::State(s, op)
            }
        })
    }

    fn call(c: &mut Cur) -> Result<BlockCall, String> {
        let block = c.block()?;
        let mut args = Vec::new();
        if c.eat('(') {
            loop {
                args.push(c.value()?);
                if !c.eat(',') {
                    break;
                }
            }
            c.punct(')')?;
        }
        Ok(BlockCall { block, args })
    }

    fn terminator(&self, kw: &str, c: &mut Cur) -> Result<Terminator, String> {
        Ok(match kw {
            "jump" => Terminator::Jump(Self::call(c)?),
            "br" => {
                let cond = c.value()?;
                c.comma()?;
                let t = Self::call(c)?;
                c.comma()?;
                Terminator::Branch(cond, t, Self::call(c)?)
            }
            _ => {
                let a = c.ident("an action (forward, multicast, flood, reply, drop)")?;
                Terminator::Return(match a.as_str() {
                    "forward" => ActionExpr::Forward(c.value()?),
                    "multicast" => ActionExpr::Multicast(c.value()?),
                    "flood" => ActionExpr::Flood,
                    "reply" => ActionExpr::Reply,
                    "drop" => {
                        let r = c.ident("a drop reason")?;
                        let reason = DropReason::ALL.iter().find(|d| d.name() == r).ok_or_else(|| {
                            let names: Vec<&str> = DropReason::ALL.iter().map(|d| d.name()).collect();
                            format!("unknown drop reason `{r}`; one of {}", names.join(", "))
                        })?;
                        ActionExpr::Drop(*reason)
                    }
                    a => return Err(format!("unknown action `{a}`; write forward, multicast, flood, reply or drop")),
                })
            }
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ir::{u, verify, Builder};

    /// A function using every op, state kind and action prints, reads back and prints the same.
    #[test]
    fn every_op_round_trips() {
        let mut b = Builder::new("everything", 128);
        let c = b.counter("c", 12);
        let r = b.register("r", u(48));
        let a = b.array("a", u(16), 1024);
        let t = b.cam("t", u(256), u(8), 4);
        let l = b.lru("l", u(16), u(8), 3, 3);
        let h = b.hash_table("h", u(16), u(48), 1024, 4);
        let tc = b.tcam("tc", u(16), u(8), 5);
        let q = b.queue("q", u(8), 100);
        let x = b.pkt_read(0, 2);
        let y = b.pkt_read(x + 3, 2);
        let k = b.pkt_read(x, 32);
        let ops: Vec<Value> = vec![
            b.not(x),
            b.neg(x),
            b.add(x, y),
            b.sub(x, y),
            b.mul(x, y),
            b.and(x, y),
            b.or(x, y),
            b.xor(x, y),
            b.shl(x, y),
            b.lshr(x, y),
            b.ashr(x, y),
        ];
        let cmps: Vec<Value> = vec![b.eq(x, y), b.ne(x, y), b.ult(x, y), b.ule(x, y), b.ugt(x, y), b.uge(x, y)];
        let s = b.cmp(CmpOp::Slt, x, y);
        let s2 = b.cmp(CmpOp::Sge, x, y);
        let wide = b.sext(x, 200);
        let z = b.zext(x, 64);
        let tr = b.trunc(z, 8);
        let sel = b.select(s, ops[0], ops[1]);
        let sl = b.slice(wide, 190, 10);
        let cat = b.concat(sl, tr);
        let big = b.constant(BitVec::ones(256).lshr(3));
        let len = b.pkt_len();
        b.pkt_set_len(len);
        let (p, ml, ts) = (b.in_port(), b.meta_len(), b.timestamp());
        let sum = b.ones_sum(x, y);
        let wsum = b.window_sum(x, y);
        let fold = b.csum_fold(ts);
        b.pkt_write(x + 1, sel);
        b.pkt_write(7, fold);
        b.counter_inc(c);
        b.counter_add(c, p);
        b.counter_set(c, ml);
        let cg = b.counter_get(c);
        let rg = b.reg_get(r);
        b.reg_set(r, rg);
        let ag = b.array_get(a, cg);
        let ok = b.array_set(a, x, ag);
        let got = b.cam_get(t, k);
        let has = b.cam_contains(t, big);
        let ev = b.cam_insert(t, k, tr);
        let rm = b.cam_remove(t, ev.key);
        let _ = (cmps, s2, cat, sum, wsum, ok, got, has, rm);
        let lg = b.lru_get(l, x);
        let lp = b.lru_peek(l, y);
        let lc = b.lru_contains(l, x);
        let li = b.lru_insert(l, x, tr);
        let lr = b.lru_remove(l, li.key);
        let hg = b.hash_get(h, x);
        let hc = b.hash_contains(h, y);
        let hi = b.hash_insert(h, x, rg);
        let hr = b.hash_remove(h, hi.key);
        let tl = b.tcam_lookup(tc, x);
        let ts = b.tcam_lookup_slot(tc, y);
        let tset = b.tcam_set(tc, ts.value, x, y, tl.value);
        b.tcam_clear(tc, cg);
        let qp = b.queue_push(q, tr);
        let qo = b.queue_pop(q);
        let qk = b.queue_peek(q);
        let ql = b.queue_len(q);
        let qe = b.queue_is_empty(q);
        let qf = b.queue_is_full(q);
        let _ = (lg, lp, lc, lr, hg, hc, hr, tset, qp, qo, qk, ql, qe, qf);
        let mask = b.iconst(32, 0x5);
        let (b1, b2, b3, b4) = (b.new_block(), b.new_block(), b.new_block(), b.new_block());
        let param = b.block_param(b4, u(8));
        b.branch(s, b1, BlockCall::new(b4, &[p]));
        b.switch_to(b1);
        b.branch(has, b2, b3);
        b.switch_to(b2);
        b.ret_multicast(mask);
        b.switch_to(b3);
        b.ret_reply();
        b.switch_to(b4);
        let (b5, b6) = (b.new_block(), b.new_block());
        b.branch(rm.valid, b5, b6);
        b.switch_to(b5);
        b.ret_forward(param);
        b.switch_to(b6);
        let b7 = b.new_block();
        b.branch(got.valid, b7, b7);
        b.switch_to(b7);
        b.ret_flood();
        let f = b.finish().unwrap();
        let text = f.to_string();
        let back = parse(&text).unwrap();
        verify(&back).unwrap();
        assert_eq!(back.to_string(), text);
        assert_eq!(back, f, "the same function, arenas and all");
        assert!(text.contains("v2:u256 = pkt.read v0, 32"), "{text}");
        assert!(
            text.contains("    state h: hash_table<u16, u48, 1024, 4>\n    state tc: tcam<u16, u8, 5>\n"),
            "{text}"
        );
        assert!(text.contains(" = tcam.lookup_slot tc, v1\n"), "{text}");
        assert!(text.contains(":u3 = tcam.lookup_slot"), "5 slots are numbered with 3 bits: {text}");
        assert!(text.contains(":u7 = queue.len q\n"), "0 to 100 values need 7 bits: {text}");
        for name in StateOp::NAMES {
            assert!(text.contains(&format!(" {name} ")), "{name} is in the function: {text}");
        }
        assert!(text.contains("const 0x1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"), "{text}");
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = parse("fn f(window=64) {\nblock0:\n    v0:u8 = add v1\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: expected `,` at the end of the line");
        let e = parse("fn f(window=64) {\nblock0:\n    return flood\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: the function has no closing `}`");
        let e = parse("fn f(window=64) {\n    v0:u8 = const 1\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: an instruction outside a block; start one with `block0:`");
        let e = parse("fn f(window=64) {\nblock0:\n    v0:u8 = const 0x1zz\n}\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: `0x1zz` is not a number");
    }
}
