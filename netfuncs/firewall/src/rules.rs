//! The rule language: iptables-like lines, parsed with `nom`, compiled into TCAM rules.
//!
//! # Grammar
//!
//! One statement a line; `#` starts a comment; blank lines are fine. Options may come in any
//! order; each may appear once.
//!
//! ```text
//! line      = [ policy | rule ] [ "#" comment ]
//! policy    = "-P" [ "FORWARD" ] target
//! rule      = [ "-A" [ "FORWARD" ] ] { option } "-j" target { option }
//! target    = "ACCEPT" | "DROP"
//! option    = ("-i" | "--in-interface") ( "inside" | "outside" | "0" | "1" )
//!           | ("-p" | "--protocol") ( "tcp" | "udp" | "icmp" | "all" | 0..255 )
//!           | ("-s" | "--source" | "-d" | "--destination") ( "any" | a.b.c.d [ "/" 0..32 ] )
//!           | ("--sport" | "--source-port" | "--dport" | "--destination-port") port [ (":" | "-") port ]
//!           | "--syn"                          (TCP: SYN set; ACK, RST, FIN clear)
//!           | "--tcp-flags" flags flags        (TCP: of the first list, exactly the second are set)
//!           | "--icmp-type" ( 0..255 | "echo-request" | "echo-reply" | "destination-unreachable" | "time-exceeded" )
//!           | "-m" ( "tcp" | "udp" | "icmp" )  (accepted and ignored, as iptables needs it)
//! flags     = flag { "," flag }, flag = SYN | ACK | FIN | RST | PSH | URG | ALL | NONE
//! ```
//!
//! Ports need `-p tcp` or `-p udp`, `--syn` and `--tcp-flags` need `-p tcp`, `--icmp-type`
//! needs `-p icmp`. A missing option matches anything. Negation (`!`) is not supported: write
//! the exception as an earlier rule.
//!
//! ```text
//! -P DROP                                                   # what no rule matches is dropped
//! -A FORWARD -i inside -p tcp --dport 80 -j ACCEPT          # web from inside out
//! -i outside -p tcp --sport 80 --tcp-flags ACK ACK -j ACCEPT   # replies (ACK set), not new connections
//! -p icmp -j ACCEPT                                         # ping both ways
//! -p udp -s 10.0.0.0/24 --dport 5000:5099 -j DROP
//! ```
//!
//! # Compiling
//!
//! A rule becomes one TCAM slot per (source-port prefix, destination-port prefix) pair: a port
//! range is split into the fewest aligned power-of-two blocks
//! ([`emu::state::range_prefixes`]; `80` is one, `1024:2047` one, `1000:2000` eight,
//! `1:65534` thirty). Rules keep their order, so the first rule that matches wins.

use emu::Port;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_till1};
use nom::character::complete::{char, digit1, space0};
use nom::combinator::{all_consuming, map, map_res, opt, value};
use nom::multi::separated_list1;
use nom::sequence::preceded;
use nom::{IResult, Parser};
use std::fmt;

/// What a rule does to the packets it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Forward out of the other port.
    Accept,
    /// Drop (`policy`).
    Drop,
}

/// One rule, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Its line in the file, from 1.
    pub line: usize,
    /// The port the packet came in by; `None` for either.
    pub in_port: Option<Port>,
    /// IPv4 protocol number; `None` for any.
    pub protocol: Option<u8>,
    /// Source prefix (address, length); length 0 matches any.
    pub src: (u32, u8),
    /// Destination prefix (address, length).
    pub dst: (u32, u8),
    /// Source port range, inclusive (`0..=65535` for any); for ICMP, the type.
    pub sport: (u16, u16),
    /// Destination port range, inclusive.
    pub dport: (u16, u16),
    /// TCP flags (mask, value): the flags in the mask must equal those in the value.
    pub tcp_flags: (u8, u8),
    /// What it does.
    pub verdict: Verdict,
}

/// A rule file: rules in order and the default policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSet {
    /// The rules, first match wins.
    pub rules: Vec<Rule>,
    /// What a packet no rule matches gets.
    pub default: Verdict,
}

/// A mistake in a rule file, where it is and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// Line, from 1.
    pub line: usize,
    /// Column (in characters), from 1.
    pub column: usize,
    /// What is wrong and what to write.
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for RuleError {}

/// TCP flag bits as they sit in the header's 14th byte.
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
const URG: u8 = 0x20;

type Res<'a, T> = IResult<&'a str, T>;

/// A word: what runs up to whitespace or a comment.
fn word(i: &str) -> Res<'_, &str> {
    take_till1(|c: char| c.is_whitespace() || c == '#').parse(i)
}

fn number<T: std::str::FromStr>(i: &str) -> Res<'_, T> {
    map_res(digit1, str::parse::<T>).parse(i)
}

fn prefix(i: &str) -> Res<'_, (u32, u8)> {
    let any = value((0u32, 0u8), alt((tag("any"), tag("0/0"))));
    let octets = (number::<u8>, char('.'), number::<u8>, char('.'), number::<u8>, char('.'), number::<u8>);
    let addr = map(octets, |(a, _, b, _, c, _, d)| u32::from_be_bytes([a, b, c, d]));
    let len = opt(preceded(char('/'), map_res(number::<u8>, |n| if n <= 32 { Ok(n) } else { Err(()) })));
    alt((any, map((addr, len), |(a, l)| (a, l.unwrap_or(32))))).parse(i)
}

fn port_range(i: &str) -> Res<'_, (u16, u16)> {
    map((number::<u16>, opt(preceded(alt((char(':'), char('-'))), number::<u16>))), |(lo, hi)| (lo, hi.unwrap_or(lo)))
        .parse(i)
}

fn protocol(i: &str) -> Res<'_, Option<u8>> {
    alt((
        value(Some(6), tag("tcp")),
        value(Some(17), tag("udp")),
        value(Some(1), tag("icmp")),
        value(None, tag("all")),
        map(number::<u8>, Some),
    ))
    .parse(i)
}

fn interface(i: &str) -> Res<'_, Port> {
    alt((value(0, alt((tag("inside"), tag("0")))), value(1, alt((tag("outside"), tag("1")))))).parse(i)
}

fn target(i: &str) -> Res<'_, Verdict> {
    alt((value(Verdict::Accept, tag("ACCEPT")), value(Verdict::Drop, tag("DROP")))).parse(i)
}

fn flags(i: &str) -> Res<'_, u8> {
    let flag = alt((
        value(SYN, tag("SYN")),
        value(ACK, tag("ACK")),
        value(FIN, tag("FIN")),
        value(RST, tag("RST")),
        value(PSH, tag("PSH")),
        value(URG, tag("URG")),
        value(SYN | ACK | FIN | RST | PSH | URG, tag("ALL")),
        value(0, tag("NONE")),
    ));
    map(separated_list1(char(','), flag), |fs| fs.into_iter().fold(0, |a, f| a | f)).parse(i)
}

fn icmp_type(i: &str) -> Res<'_, u8> {
    alt((
        value(8, tag("echo-request")),
        value(0, tag("echo-reply")),
        value(3, tag("destination-unreachable")),
        value(11, tag("time-exceeded")),
        number::<u8>,
    ))
    .parse(i)
}

/// One line's words with their columns (from 1), up to a comment.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let Ok((r, _)) = space0::<_, nom::error::Error<&str>>(rest) else { break };
        rest = r;
        match word(rest) {
            Ok((r, w)) => {
                out.push((line[..line.len() - rest.len()].chars().count() + 1, w));
                rest = r;
            }
            Err(_) => break,
        }
    }
    out
}

/// Parses a rule file. The first mistake is returned with its line and column.
pub fn parse(text: &str) -> Result<RuleSet, RuleError> {
    let mut set = RuleSet { rules: Vec::new(), default: Verdict::Accept };
    let mut policy_line = None;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let ws = words(line);
        let err = |column: usize, message: String| RuleError { line: line_no, column, message };
        let Some(&(col0, first)) = ws.first() else { continue };
        if first == "-P" || first == "--policy" {
            let mut rest = &ws[1..];
            if rest.first().is_some_and(|(_, w)| *w == "FORWARD") {
                rest = &rest[1..];
            }
            let (col, w) =
                *rest.first().ok_or_else(|| err(col0, "-P needs a target: `-P DROP` or `-P ACCEPT`".into()))?;
            let verdict =
                full(target, w).ok_or_else(|| err(col, format!("`{w}` is not a policy; write ACCEPT or DROP")))?;
            if let Some(&(c, extra)) = rest.get(1) {
                return Err(err(c, format!("unexpected `{extra}` after the policy; a policy line is `-P DROP`")));
            }
            if let Some(prev) = policy_line {
                return Err(err(col0, format!("a second policy; the first is on line {prev}: keep one")));
            }
            policy_line = Some(line_no);
            set.default = verdict;
            continue;
        }
        set.rules.push(parse_rule(line_no, &ws)?);
    }
    Ok(set)
}

/// `p` over all of `w`, or `None`.
fn full<'a, T>(p: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>, w: &'a str) -> Option<T> {
    all_consuming(p).parse(w).ok().map(|(_, v)| v)
}

fn parse_rule(line: usize, ws: &[(usize, &str)]) -> Result<Rule, RuleError> {
    let err = |column: usize, message: String| RuleError { line, column, message };
    let mut rule = Rule {
        line,
        in_port: None,
        protocol: None,
        src: (0, 0),
        dst: (0, 0),
        sport: (0, u16::MAX),
        dport: (0, u16::MAX),
        tcp_flags: (0, 0),
        verdict: Verdict::Accept,
    };
    let mut i = 0;
    if ws[0].1 == "-A" || ws[0].1 == "--append" {
        i = 1;
        match ws.get(1) {
            Some((_, "FORWARD")) => i = 2,
            Some((c, w)) if !w.starts_with('-') => {
                return Err(err(
                    *c,
                    format!("unknown chain `{w}`: the firewall has one chain, FORWARD (or leave it out)"),
                ))
            }
            _ => {}
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut target_at = None;
    // Options that need a protocol, with where they were, to check once the line is read.
    let mut needs: Vec<(usize, &str, &[u8])> = Vec::new();
    while i < ws.len() {
        let (col, opt) = ws[i];
        let canonical = match opt {
            "--in-interface" => "-i",
            "--protocol" => "-p",
            "--source" => "-s",
            "--destination" => "-d",
            "--source-port" => "--sport",
            "--destination-port" => "--dport",
            "--jump" => "-j",
            o => o,
        };
        if opt == "!" {
            return Err(err(col, "negation (`!`) is not supported; write the exception as an earlier rule".into()));
        }
        let takes = match canonical {
            "--syn" => 0,
            "--tcp-flags" => 2,
            "-i" | "-p" | "-s" | "-d" | "--sport" | "--dport" | "--icmp-type" | "-m" | "-j" => 1,
            _ => {
                return Err(err(
                    col,
                    format!(
                        "unknown option `{opt}`; a rule takes -i, -p, -s, -d, --sport, --dport, --syn, --tcp-flags, \
                         --icmp-type and -j ACCEPT|DROP (e.g. `-p tcp --dport 80 -j ACCEPT`)"
                    ),
                ))
            }
        };
        if canonical != "-m" && seen.contains(&canonical) {
            return Err(err(col, format!("`{opt}` is given twice in this rule; keep one")));
        }
        seen.push(canonical);
        let args = &ws[i + 1..(i + 1 + takes).min(ws.len())];
        if args.len() < takes {
            return Err(err(col + opt.chars().count(), format!("`{opt}` needs {takes} value(s) after it")));
        }
        let arg = |what: &str| -> RuleError { err(args[0].0, format!("`{}` is not {what}", args[0].1)) };
        match canonical {
            "-i" => {
                rule.in_port = Some(
                    full(interface, args[0].1)
                        .ok_or_else(|| arg("an interface: write inside (port 0) or outside (port 1)"))?,
                )
            }
            "-p" => {
                rule.protocol = full(protocol, args[0].1)
                    .ok_or_else(|| arg("a protocol: write tcp, udp, icmp, all or a number 0 to 255"))?
            }
            "-s" => {
                rule.src = full(prefix, args[0].1)
                    .ok_or_else(|| arg("an IPv4 prefix: write e.g. 10.0.0.0/24, 10.0.0.7 or any"))?
            }
            "-d" => {
                rule.dst = full(prefix, args[0].1)
                    .ok_or_else(|| arg("an IPv4 prefix: write e.g. 10.0.0.0/24, 10.0.0.7 or any"))?
            }
            "--sport" | "--dport" => {
                let r =
                    full(port_range, args[0].1).ok_or_else(|| arg("a port or range: write e.g. 80 or 1024:65535"))?;
                if r.0 > r.1 {
                    return Err(err(
                        args[0].0,
                        format!("`{}` is an empty range; write the lower port first ({}:{})", args[0].1, r.1, r.0),
                    ));
                }
                if canonical == "--sport" {
                    rule.sport = r;
                } else {
                    rule.dport = r;
                }
                needs.push((col, opt, &[6, 17]));
            }
            "--syn" => {
                rule.tcp_flags = (SYN | ACK | RST | FIN, SYN);
                needs.push((col, opt, &[6]));
            }
            "--tcp-flags" => {
                let bad = |a: &(usize, &str)| {
                    err(
                        a.0,
                        format!(
                            "`{}` is not a list of TCP flags: write e.g. SYN,ACK (SYN ACK FIN RST PSH URG ALL NONE)",
                            a.1
                        ),
                    )
                };
                let mask = full(flags, args[0].1).ok_or_else(|| bad(&args[0]))?;
                let set = full(flags, args[1].1).ok_or_else(|| bad(&args[1]))?;
                rule.tcp_flags = (mask, set & mask);
                needs.push((col, opt, &[6]));
            }
            "--icmp-type" => {
                let t = full(icmp_type, args[0].1).ok_or_else(|| arg("an ICMP type: write a number or echo-request, echo-reply, destination-unreachable, time-exceeded"))?;
                rule.sport = (t as u16, t as u16);
                needs.push((col, opt, &[1]));
            }
            "-m" => {
                if full(alt((tag("tcp"), tag("udp"), tag("icmp"))), args[0].1).is_none() {
                    return Err(arg("a match this firewall has: write -m tcp, -m udp or -m icmp (or leave -m out)"));
                }
            }
            "-j" => {
                rule.verdict = full(target, args[0].1).ok_or_else(|| {
                    let also =
                        if args[0].1 == "REJECT" { " (REJECT would answer; this firewall drops silently)" } else { "" };
                    arg(&format!("a target: write ACCEPT or DROP{also}"))
                })?;
                target_at = Some(col);
            }
            _ => unreachable!("every option is listed above"),
        }
        i += 1 + takes;
    }
    if target_at.is_none() {
        return Err(err(ws[0].0, "the rule has no target: end it with `-j ACCEPT` or `-j DROP`".into()));
    }
    for (col, opt, protos) in needs {
        if !rule.protocol.is_some_and(|p| protos.contains(&p)) {
            let want = match protos {
                [6] => "-p tcp",
                [1] => "-p icmp",
                _ => "-p tcp or -p udp",
            };
            return Err(err(col, format!("`{opt}` needs {want} in the same rule")));
        }
    }
    Ok(rule)
}

/// The TCAM key of a packet: in port, protocol, source, destination, source port (ICMP type),
/// destination port, TCP flags, from the high bits down (120 bits).
pub fn key(in_port: Port, protocol: u8, src: u32, dst: u32, sport: u16, dport: u16, tcp_flags: u8) -> u128 {
    (in_port as u128) << 112
        | (protocol as u128) << 104
        | (src as u128) << 72
        | (dst as u128) << 40
        | (sport as u128) << 24
        | (dport as u128) << 8
        | tcp_flags as u128
}

/// A rule set as TCAM contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// (value, mask, result) per slot, in priority order.
    pub slots: Vec<(u128, u128, u8)>,
    /// Slots each rule takes, by rule number.
    pub slots_per_rule: Vec<usize>,
    /// The default policy.
    pub default_accept: bool,
}

/// Compiles `set` into TCAM slots; the error says which rules take too many.
pub fn compile(set: &RuleSet) -> Result<Compiled, String> {
    let slots_max = crate::RULE_SLOTS;
    let prefix_mask = |len: u8| if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
    let mut slots = Vec::new();
    let mut per_rule = Vec::new();
    for (n, r) in set.rules.iter().enumerate() {
        let result = n as u8 | if r.verdict == Verdict::Accept { crate::ACCEPT_BIT } else { 0 };
        let (sm, dm) = (prefix_mask(r.src.1), prefix_mask(r.dst.1));
        let sports = emu::state::range_prefixes(r.sport.0 as u64, r.sport.1 as u64, 16);
        let dports = emu::state::range_prefixes(r.dport.0 as u64, r.dport.1 as u64, 16);
        let before = slots.len();
        for &(sp, spm) in &sports {
            for &(dp, dpm) in &dports {
                let value = key(
                    r.in_port.unwrap_or(0),
                    r.protocol.unwrap_or(0),
                    r.src.0 & sm,
                    r.dst.0 & dm,
                    sp as u16,
                    dp as u16,
                    r.tcp_flags.1,
                );
                let mask = key(
                    if r.in_port.is_some() { 0xff } else { 0 },
                    if r.protocol.is_some() { 0xff } else { 0 },
                    sm,
                    dm,
                    spm as u16,
                    dpm as u16,
                    r.tcp_flags.0,
                );
                slots.push((value, mask, result));
            }
        }
        per_rule.push(slots.len() - before);
    }
    if slots.len() > slots_max {
        let mut big: Vec<(usize, &Rule)> = per_rule.iter().copied().zip(&set.rules).filter(|(k, _)| *k > 1).collect();
        big.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
        let list: Vec<String> = big.iter().take(3).map(|(k, r)| format!("line {} takes {k}", r.line)).collect();
        return Err(format!(
            "the rules take {} table slots and the firewall has {slots_max}: a rule takes one slot per pair of \
             source- and destination-port prefixes{}; use aligned ranges (1024:2047 is one prefix, 1000:2000 eight) \
             or fewer rules",
            slots.len(),
            if list.is_empty() { String::new() } else { format!(" ({})", list.join(", ")) }
        ));
    }
    Ok(Compiled { slots, slots_per_rule: per_rule, default_accept: set.default == Verdict::Accept })
}
