//! The zone file: a practical subset of the RFC 1035 master-file format (§5), parsed with `nom`.
//!
//! # Grammar
//!
//! One entry a line; `;` starts a comment; blank lines are fine.
//!
//! ```text
//! line      = [ directive | record ] [ ";" comment ]
//! directive = "$ORIGIN" name          (the origin relative names end in)
//!           | "$TTL" ttl              (the TTL of records that give none)
//! record    = [ owner ] { ttl | "IN" } "A" a.b.c.d      (a TTL and the class, each at most once, either order)
//! owner     = name | "@"              (absent: the line starts with a blank and the owner is the previous record's)
//! name      = label { "." label } [ "." ]   (a final "." makes it absolute; without, the origin is appended)
//! label     = 1 to 63 of A-Z a-z 0-9 "-" "_"
//! ttl       = seconds, or BIND units: 3600, 1h, 1h30m, 2d, 1w (at most 2147483647 s, RFC 2181)
//! ```
//!
//! Names are case-insensitive (RFC 4343): they are kept lowercase. The server answers A
//! queries only, so other record types (`AAAA`, `MX`, `NS`, `SOA`, …) are refused with a
//! message rather than ignored; so are other classes, `$INCLUDE`, parentheses, quoted strings,
//! escapes and wildcards. A name must fit the hardware's table key: at most
//! [`NAME_MAX`](crate::NAME_MAX) bytes in wire format (labels with their length bytes and the
//! root's 0). One address per name.
//!
//! ```text
//! $ORIGIN example.com.
//! $TTL 1h
//! @          IN A 192.0.2.1      ; example.com.
//! www        300 IN A 192.0.2.10
//!            IN A 192.0.2.10     ; error: a second A record for www.example.com.
//! mail.example.com. A 192.0.2.25
//! ```

use crate::{NAME_MAX, ZONE_SLOTS};
use emu::Ipv4Addr;
use nom::branch::alt;
use nom::bytes::complete::{tag_no_case, take_till1};
use nom::character::complete::{char, digit1, one_of, space0};
use nom::combinator::{all_consuming, map, map_res, opt};
use nom::multi::many1;
use nom::sequence::preceded;
use nom::{IResult, Parser};
use std::fmt;

/// One A record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its line in the file, from 1.
    pub line: usize,
    /// The owner, absolute and lowercase, with its final dot (`www.example.com.`).
    pub name: String,
    /// Seconds a resolver may cache the answer.
    pub ttl: u32,
    /// The address.
    pub addr: Ipv4Addr,
}

/// A zone file's A records, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Zone {
    /// The records; no two have the same name.
    pub records: Vec<Record>,
}

/// A mistake in a zone file, where it is and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneError {
    /// Line, from 1.
    pub line: usize,
    /// Column (in characters), from 1.
    pub column: usize,
    /// What is wrong and what to write.
    pub message: String,
}

impl fmt::Display for ZoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ZoneError {}

/// The largest TTL (RFC 2181 §8).
pub const MAX_TTL: u32 = 0x7fff_ffff;

/// Record types a master file may hold that the server does not serve: refused by name.
const OTHER_TYPES: &[&str] = &[
    "AAAA", "NS", "CNAME", "SOA", "PTR", "MX", "TXT", "SRV", "CAA", "DNAME", "DS", "DNSKEY", "RRSIG", "NSEC", "NSEC3",
    "HINFO", "NAPTR", "SSHFP", "TLSA", "SPF", "SVCB", "HTTPS", "LOC", "RP", "AFSDB",
];

type Res<'a, T> = IResult<&'a str, T>;

/// A field: what runs up to a blank.
fn field(i: &str) -> Res<'_, &str> {
    preceded(space0, take_till1(|c: char| c == ' ' || c == '\t')).parse(i)
}

/// A TTL: seconds, or a sum of BIND units (`1h30m`).
fn ttl(i: &str) -> Res<'_, u64> {
    let unit = |u: Option<char>| match u.map(|c| c.to_ascii_lowercase()) {
        None | Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3600,
        Some('d') => 86_400,
        _ => 604_800,
    };
    let part =
        map((map_res(digit1, str::parse::<u64>), opt(one_of("smhdwSMHDW"))), move |(n, u)| n.saturating_mul(unit(u)));
    map(many1(part), |parts: Vec<u64>| parts.into_iter().fold(0u64, u64::saturating_add)).parse(i)
}

fn ipv4(i: &str) -> Res<'_, Ipv4Addr> {
    let octet = || map_res(digit1, str::parse::<u8>);
    map((octet(), char('.'), octet(), char('.'), octet(), char('.'), octet()), |(a, _, b, _, c, _, d)| {
        Ipv4Addr::new(a, b, c, d)
    })
    .parse(i)
}

fn class(i: &str) -> Res<'_, &str> {
    alt((tag_no_case("IN"), tag_no_case("CH"), tag_no_case("HS"), tag_no_case("CS"))).parse(i)
}

/// `name`'s wire format: each label after its length byte, then the root's 0. `name` is
/// absolute (it ends in `.`); `.` alone is the root.
pub fn wire_name(name: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 1);
    for label in name.trim_end_matches('.').split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

/// One line being read: its number and text, for errors that point into it.
struct Line<'a> {
    number: usize,
    text: &'a str,
}

impl<'a> Line<'a> {
    /// An error at `at`, a slice of this line.
    fn error(&self, at: &str, message: impl Into<String>) -> ZoneError {
        let offset = (at.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize).min(self.text.len());
        ZoneError { line: self.number, column: self.text[..offset].chars().count() + 1, message: message.into() }
    }

    /// The fields of the line (up to its comment), each a slice of it.
    fn fields(&self) -> Vec<&'a str> {
        let body = self.text.split(';').next().unwrap_or("");
        let mut rest = body.trim_end();
        let mut out = vec![];
        while let Ok((r, f)) = field(rest) {
            out.push(f);
            rest = r;
        }
        out
    }

    /// `text` (a slice of the line) as an absolute, lowercase name.
    fn name(&self, text: &str, origin: Option<&str>) -> Result<String, ZoneError> {
        let full = if text == "@" {
            origin.map(str::to_string).ok_or_else(|| {
                self.error(text, "`@` is the origin and no $ORIGIN is set: write `$ORIGIN example.com.` first")
            })?
        } else if text.ends_with('.') {
            text.to_string()
        } else {
            match origin {
                Some(".") => format!("{text}."),
                Some(o) => format!("{text}.{o}"),
                None => {
                    return Err(self.error(
                        text,
                        format!("`{text}` is relative and no $ORIGIN is set: write `{text}.example.com.` or `$ORIGIN example.com.` first"),
                    ))
                }
            }
        };
        if full != "." {
            for label in full.trim_end_matches('.').split('.') {
                if label.is_empty() {
                    return Err(self.error(
                        text,
                        format!(
                            "`{text}` has an empty label (two dots, or a leading one): write e.g. `www.example.com.`"
                        ),
                    ));
                }
                if label == "*" {
                    return Err(self.error(text, format!("`{text}`: wildcards are not served; write each name out")));
                }
                if let Some(c) = label.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
                    return Err(self.error(
                        text,
                        format!("`{text}`: `{c}` is not allowed in a name; labels are letters, digits, `-` and `_`"),
                    ));
                }
                if label.len() > 63 {
                    return Err(self.error(
                        text,
                        format!(
                            "`{text}`: the label `{label}` has {} characters; a label has at most 63 (RFC 1035)",
                            label.len()
                        ),
                    ));
                }
            }
        }
        let wire = wire_name(&full).len();
        if wire > NAME_MAX {
            return Err(self.error(
                text,
                format!(
                    "`{full}` takes {wire} bytes in a DNS message and the server's table holds names of at most {NAME_MAX} \
                     (NAME_MAX, the hardware's key width); use a shorter name"
                ),
            ));
        }
        Ok(full.to_ascii_lowercase())
    }

    fn ttl(&self, text: &str) -> Result<u32, ZoneError> {
        match all_consuming(ttl).parse(text) {
            Ok((_, t)) if t <= MAX_TTL as u64 => Ok(t as u32),
            Ok(_) => Err(self
                .error(text, format!("the TTL `{text}` is over {MAX_TTL} seconds (RFC 2181): write e.g. 3600 or 1d"))),
            Err(_) => {
                Err(self
                    .error(text, format!("`{text}` is not a TTL: write seconds (3600) or units (1h, 1h30m, 2d, 1w)")))
            }
        }
    }
}

/// Reads a zone file. The error points at the first mistake.
pub fn parse(text: &str) -> Result<Zone, ZoneError> {
    let mut origin: Option<String> = None;
    let mut default_ttl: Option<u32> = None;
    let mut last_ttl: Option<u32> = None;
    let mut owner: Option<String> = None;
    let mut zone = Zone::default();
    for (n, raw) in text.lines().enumerate() {
        let line = Line { number: n + 1, text: raw };
        let body = raw.split(';').next().unwrap_or("");
        if let Some(i) = body.find(['(', ')', '"', '\\']) {
            let what = match &body[i..i + 1] {
                "(" | ")" => "parentheses (records over several lines)",
                "\"" => "quoted strings",
                _ => "escapes (`\\`)",
            };
            return Err(line.error(&body[i..], format!("{what} are not supported: write each A record on one line")));
        }
        let fields = line.fields();
        let Some(&first) = fields.first() else { continue };
        if first.starts_with('$') {
            let arg = |k: &str| match fields.as_slice() {
                [_, a] => Ok(*a),
                _ => Err(line.error(first, format!("`{first}` takes one value: write `{first} {k}`"))),
            };
            match first.to_ascii_uppercase().as_str() {
                "$ORIGIN" => {
                    let a = arg("example.com.")?;
                    origin = Some(line.name(a, origin.as_deref())?);
                }
                "$TTL" => default_ttl = Some(line.ttl(arg("3600")?)?),
                _ => {
                    return Err(line.error(
                        first,
                        format!(
                        "`{first}` is not supported: the directives are $ORIGIN and $TTL (no $INCLUDE or $GENERATE)"
                    ),
                    ))
                }
            }
            continue;
        }
        let starts_blank = raw.starts_with([' ', '\t']);
        let mut rest = &fields[..];
        let name = if starts_blank {
            owner.clone().ok_or_else(|| {
                line.error(first, "the line starts with a blank, which repeats the previous owner, and there is none: write the name first")
            })?
        } else {
            rest = &rest[1..];
            line.name(first, origin.as_deref())?
        };
        let (mut rec_ttl, mut class_seen) = (None, false);
        let mut ty = None;
        while let Some((&f, tail)) = rest.split_first() {
            rest = tail;
            if f.starts_with(|c: char| c.is_ascii_digit()) {
                if rec_ttl.is_some() {
                    return Err(line.error(f, "a second TTL: give at most one before the type"));
                }
                rec_ttl = Some(line.ttl(f)?);
            } else if all_consuming(class).parse(f).is_ok() {
                if !f.eq_ignore_ascii_case("IN") {
                    return Err(line.error(
                        f,
                        format!("class `{f}` is not served: the server answers class IN; write IN or nothing"),
                    ));
                }
                if class_seen {
                    return Err(line.error(f, "the class is given twice"));
                }
                class_seen = true;
            } else {
                ty = Some(f);
                break;
            }
        }
        let Some(ty) = ty else {
            let at = fields.last().copied().unwrap_or(first);
            return Err(line.error(at, "the record has no type: write `NAME [TTL] [IN] A a.b.c.d`"));
        };
        if !ty.eq_ignore_ascii_case("A") {
            let upper = ty.to_ascii_uppercase();
            let message = if OTHER_TYPES.contains(&upper.as_str()) || upper.starts_with("TYPE") {
                format!("`{ty}` records are not served: the server answers A queries only; remove the line or write `NAME [TTL] [IN] A a.b.c.d`")
            } else {
                format!("`{ty}` is not a record type: write `NAME [TTL] [IN] A a.b.c.d`")
            };
            return Err(line.error(ty, message));
        }
        let addr = match rest {
            [a] => all_consuming(ipv4)
                .parse(a)
                .map(|(_, x)| x)
                .map_err(|_| line.error(a, format!("`{a}` is not an IPv4 address: write e.g. 192.0.2.1")))?,
            [] => return Err(line.error(ty, "the A record has no address: write `A a.b.c.d`")),
            [_, extra, ..] => {
                return Err(line.error(
                    extra,
                    format!("`{extra}` after the address: an A record has one address (a `;` starts a comment)"),
                ))
            }
        };
        let ttl = match rec_ttl.or(default_ttl).or(last_ttl) {
            Some(t) => t,
            None => {
                return Err(line.error(
                    first,
                    "the record has no TTL and no $TTL is set: write `$TTL 3600` first or a TTL before the type",
                ))
            }
        };
        if let Some(prev) = zone.records.iter().find(|r| r.name == name) {
            return Err(line.error(
                first,
                format!(
                    "a second A record for `{name}` (the first is on line {}): the server answers one address per name",
                    prev.line
                ),
            ));
        }
        if zone.records.len() == ZONE_SLOTS {
            return Err(line.error(
                first,
                format!("more than {ZONE_SLOTS} names: the server's table holds {ZONE_SLOTS} (ZONE_SLOTS)"),
            ));
        }
        last_ttl = Some(ttl);
        owner = Some(name.clone());
        zone.records.push(Record { line: line.number, name, ttl, addr });
    }
    Ok(zone)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn origin_ttl_owners_and_units() {
        let z = parse(
            "; a zone\n$ORIGIN Example.COM.\n$TTL 1h\n@ IN A 192.0.2.1 ; apex\nwww 300 IN A 192.0.2.10\n\
             mail.example.net. IN 1d A 192.0.2.25\n\n$ORIGIN lab\nHost1 a 10.0.0.1\n  ; only a comment\n",
        )
        .unwrap();
        let got: Vec<(usize, &str, u32, String)> =
            z.records.iter().map(|r| (r.line, r.name.as_str(), r.ttl, r.addr.to_string())).collect();
        assert_eq!(
            got,
            [
                (4, "example.com.", 3600, "192.0.2.1".to_string()),
                (5, "www.example.com.", 300, "192.0.2.10".to_string()),
                (6, "mail.example.net.", 86400, "192.0.2.25".to_string()),
                (9, "host1.lab.example.com.", 3600, "10.0.0.1".to_string()),
            ]
        );
        assert_eq!(parse("$TTL 1h30m\na.b. A 1.2.3.4").unwrap().records[0].ttl, 5400);
        // Without $TTL, the previous record's TTL carries on (RFC 1035 §5.1).
        assert_eq!(parse("a. 60 A 1.2.3.4\nb. A 1.2.3.5").unwrap().records[1].ttl, 60);
        assert_eq!(wire_name("www.example.com."), b"\x03www\x07example\x03com\x00");
        assert_eq!(wire_name("."), [0]);
    }

    #[test]
    fn bad_zones_say_where_and_what_to_write() {
        // `x.example.com.` takes the label's length + 14 bytes.
        let long = format!("{}.example.com.", "a".repeat(NAME_MAX - 13));
        let too_long = format!(
            "2:1: `{long}` takes {} bytes in a DNS message and the server's table holds names of at most {NAME_MAX} (NAME_MAX",
            NAME_MAX + 1
        );
        let cases: Vec<(String, &str)> = vec![
            (
                "$ORIGIN x.\nwww IN AAAA 2001:db8::1".into(),
                "2:8: `AAAA` records are not served: the server answers A queries only",
            ),
            ("a. 60 MX 10 mail.a.".into(), "1:7: `MX` records are not served"),
            ("a. 60 IN FOO 1.2.3.4".into(), "1:10: `FOO` is not a record type: write `NAME [TTL] [IN] A a.b.c.d`"),
            ("a. 60 CH A 1.2.3.4".into(), "1:7: class `CH` is not served"),
            ("www A 1.2.3.4".into(), "1:1: `www` is relative and no $ORIGIN is set: write `www.example.com.`"),
            ("$TTL 60\n@ A 1.2.3.4".into(), "2:1: `@` is the origin and no $ORIGIN is set"),
            ("a. A 1.2.3.4".into(), "1:1: the record has no TTL and no $TTL is set"),
            ("a. 60 A 1.2.3.400".into(), "1:9: `1.2.3.400` is not an IPv4 address: write e.g. 192.0.2.1"),
            ("a. 60 A 1.2.3.4 5.6.7.8".into(), "1:17: `5.6.7.8` after the address"),
            ("a. 60 A".into(), "1:7: the A record has no address"),
            ("a. 60x A 1.2.3.4".into(), "1:4: `60x` is not a TTL"),
            ("a. 4294967296 A 1.2.3.4".into(), "1:4: the TTL `4294967296` is over 2147483647 seconds"),
            ("$TTL 60\na. A 1.1.1.1\nA. A 1.1.1.2".into(), "3:1: a second A record for `a.` (the first is on line 2)"),
            ("$INCLUDE other.zone".into(), "1:1: `$INCLUDE` is not supported"),
            (
                "$TTL 60\n@ IN SOA ns hostmaster ( 1 2 3 4 5 )".into(),
                "2:24: parentheses (records over several lines) are not supported",
            ),
            ("$TTL 60\n*.a. A 1.2.3.4".into(), "2:1: `*.a.`: wildcards are not served"),
            ("$TTL 60\na..b. A 1.2.3.4".into(), "2:1: `a..b.` has an empty label"),
            ("$TTL 60\na!.b. A 1.2.3.4".into(), "2:1: `a!.b.`: `!` is not allowed in a name"),
            (format!("$TTL 60\n{}.b. A 1.2.3.4", "x".repeat(64)), "2:1: `xxxx"),
            (format!("$TTL 60\n{long} A 1.2.3.4"), too_long.as_str()),
            (
                "  A 1.2.3.4".into(),
                "1:3: the line starts with a blank, which repeats the previous owner, and there is none",
            ),
            ("$TTL 60\nwww.".into(), "2:1: the record has no type"),
        ];
        for (text, want) in &cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}:\n  got  {e}\n  want {want}");
        }
        assert!(
            parse(&format!("$TTL 60\n{}.example.com. A 1.2.3.4", "a".repeat(NAME_MAX - 14))).is_ok(),
            "NAME_MAX bytes fit"
        );
        let e = parse(&format!("$TTL 60\n{}.b. A 1.2.3.4", "x".repeat(64))).unwrap_err().to_string();
        assert!(e.contains("has 64 characters; a label has at most 63"), "{e}");
    }

    #[test]
    fn a_full_table_is_refused() {
        let mut text = String::from("$TTL 60\n$ORIGIN z.\n");
        for i in 0..ZONE_SLOTS {
            text += &format!("h{i} A 10.0.0.{}\n", i % 250);
        }
        assert_eq!(parse(&text).unwrap().records.len(), ZONE_SLOTS);
        text += "one-more A 10.0.0.1\n";
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains(&format!("more than {ZONE_SLOTS} names")), "{e}");
    }
}
