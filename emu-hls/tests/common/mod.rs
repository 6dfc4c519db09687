//! Hand-built IR of the two NFs the compiler must handle first, written through the
//! `ir::Builder` the way the lowering from Rust will write it (one block per source branch,
//! `||` and `&&` as branches around their right-hand side, header fields from
//! `emu_core::wire`'s tables, `usize` arithmetic in 64 bits), and a seeded random generator.
#![allow(dead_code)]

pub mod echo;
pub mod switch;

use emu_core::DropReason;
use emu_hls::ir::{field, u, BlockCall, Builder, Function, Value};

/// A field of `emu_core::wire::HEADERS`.
fn f(header: &str, name: &str) -> &'static emu_core::wire::Field {
    field(header, name).unwrap_or_else(|| panic!("no field {header}.{name}"))
}

/// `first || rest`, as the lowering of `||` makes it.
pub fn or_else(b: &mut Builder, first: Value, rest: impl FnOnce(&mut Builder) -> Value) -> Value {
    let (rhs, join) = (b.new_block(), b.new_block());
    let r = b.block_param(join, u(1));
    let t = b.bool_const(true);
    b.branch(first, BlockCall::new(join, &[t]), rhs);
    b.switch_to(rhs);
    let v = rest(b);
    b.jump(join, &[v]);
    b.switch_to(join);
    r
}

/// `first && rest`, as the lowering of `&&` makes it.
pub fn and_then(b: &mut Builder, first: Value, rest: impl FnOnce(&mut Builder) -> Value) -> Value {
    let (rhs, join) = (b.new_block(), b.new_block());
    let r = b.block_param(join, u(1));
    let fl = b.bool_const(false);
    b.branch(first, rhs, BlockCall::new(join, &[fl]));
    b.switch_to(rhs);
    let v = rest(b);
    b.jump(join, &[v]);
    b.switch_to(join);
    r
}

/// `if cond { return drop(reason) }`: continues in a new block.
fn drop_if(b: &mut Builder, cond: Value, reason: DropReason) {
    let (drop, cont) = (b.new_block(), b.new_block());
    b.branch(cond, drop, cont);
    b.switch_to(drop);
    b.ret_drop(reason);
    b.switch_to(cont);
}

/// `learning_switch::LearningSwitch::process`.
pub fn learning_switch() -> Function {
    let mut b = Builder::new("learning_switch", learning_switch::DESCRIPTOR.window as u32);
    let mac_table = b.cam("mac_table", u(48), u(8), learning_switch::MAC_TABLE_SIZE as u32);
    let floods = b.counter("floods", 64);

    // let eth = pkt.ethernet(); let (src, dst) = (eth.src(), eth.dst());
    let src = b.read_field(0, f("ethernet", "src"));
    let dst = b.read_field(0, f("ethernet", "dst"));
    // if !src.is_multicast() { self.mac_table.insert(src, meta.in_port); }
    let src_group = b.bit(src, 40);
    let src_unicast = b.not(src_group);
    let (learn, after_learn) = (b.new_block(), b.new_block());
    b.branch(src_unicast, learn, after_learn);
    b.switch_to(learn);
    let in_port = b.in_port();
    b.cam_insert(mac_table, src, in_port);
    b.jump(after_learn, &[]);
    b.switch_to(after_learn);
    // if dst.is_multicast() { self.floods.inc(); return Action::Flood; }
    let dst_group = b.bit(dst, 40);
    let (flood_mc, lookup) = (b.new_block(), b.new_block());
    b.branch(dst_group, flood_mc, lookup);
    b.switch_to(flood_mc);
    b.counter_inc(floods);
    b.ret_flood();
    // match self.mac_table.get(dst) { … }
    b.switch_to(lookup);
    let hit = b.cam_get(mac_table, dst);
    let (some, none) = (b.new_block(), b.new_block());
    b.branch(hit.valid, some, none);
    b.switch_to(some);
    let in_port = b.in_port();
    let same = b.eq(hit.value, in_port);
    let (same_port, forward) = (b.new_block(), b.new_block());
    b.branch(same, same_port, forward);
    b.switch_to(same_port);
    b.ret_drop(DropReason::SamePort);
    b.switch_to(forward);
    b.ret_forward(hit.value);
    b.switch_to(none);
    b.counter_inc(floods);
    b.ret_flood();
    b.finish().unwrap_or_else(|e| panic!("learning switch IR:\n{e}"))
}

/// `icmp_echo::IcmpEcho::process`, with the responder's `ip` and `mac` as registers (plain
/// fields of the NF struct: set when it is built, read-only while it runs).
pub fn icmp_echo() -> Function {
    let mut b = Builder::new("icmp_echo", icmp_echo::WINDOW as u32);
    let my_ip = b.register("ip", u(32));
    let my_mac = b.register("mac", u(48));
    let replies = b.counter("replies", 64);
    let arp_replies = b.counter("arp_replies", 64);

    // match pkt.ethernet().ethertype() { 0x0806 => arp, 0x0800 => ipv4, _ => drop }
    let ethertype = b.read_field(0, f("ethernet", "ethertype"));
    let is_arp = b.eq_imm(ethertype, 0x0806);
    let (arp, not_arp) = (b.new_block(), b.new_block());
    b.branch(is_arp, arp, not_arp);
    b.switch_to(not_arp);
    let is_ipv4 = b.eq_imm(ethertype, 0x0800);
    let (ipv4, other) = (b.new_block(), b.new_block());
    b.branch(is_ipv4, ipv4, other);
    b.switch_to(other);
    b.ret_drop(DropReason::NotForUs);

    // ---- fn arp ----
    b.switch_to(arp);
    let a = 14u32;
    // !req.is_ethernet_ipv4() || req.oper() != OPER_REQUEST || req.tpa() != self.ip
    let htype = b.read_field(a, f("arp", "htype"));
    let c1 = b.eq_imm(htype, 1);
    let c = and_then(&mut b, c1, |b| {
        let ptype = b.read_field(a, f("arp", "ptype"));
        b.eq_imm(ptype, 0x0800)
    });
    let c = and_then(&mut b, c, |b| {
        let hlen = b.read_field(a, f("arp", "hlen"));
        b.eq_imm(hlen, 6)
    });
    let is_eth_ipv4 = and_then(&mut b, c, |b| {
        let plen = b.read_field(a, f("arp", "plen"));
        b.eq_imm(plen, 4)
    });
    let bad = b.not(is_eth_ipv4);
    let bad = or_else(&mut b, bad, |b| {
        let oper = b.read_field(a, f("arp", "oper"));
        b.ne_imm(oper, 1)
    });
    let bad = or_else(&mut b, bad, |b| {
        let tpa = b.read_field(a, f("arp", "tpa"));
        let ip = b.reg_get(my_ip);
        b.ne(tpa, ip)
    });
    drop_if(&mut b, bad, DropReason::NotForUs);
    let asker_mac = b.read_field(a, f("arp", "sha"));
    let asker_ip = b.read_field(a, f("arp", "spa"));
    b.write_field(0, f("ethernet", "dst"), asker_mac);
    let mac = b.reg_get(my_mac);
    b.write_field(0, f("ethernet", "src"), mac);
    let reply = b.iconst(16, 2);
    b.write_field(a, f("arp", "oper"), reply);
    let mac = b.reg_get(my_mac);
    b.write_field(a, f("arp", "sha"), mac);
    let ip = b.reg_get(my_ip);
    b.write_field(a, f("arp", "spa"), ip);
    b.write_field(a, f("arp", "tha"), asker_mac);
    b.write_field(a, f("arp", "tpa"), asker_ip);
    b.counter_inc(arp_replies);
    b.ret_reply();

    // ---- fn ipv4 ----
    b.switch_to(ipv4);
    let h = 14u32;
    let dst = b.read_field(h, f("ipv4", "dst"));
    let ip = b.reg_get(my_ip);
    let not_us = b.ne(dst, ip);
    drop_if(&mut b, not_us, DropReason::NotForUs);
    // ip.checksum_ok(): the window's bytes [14, 14 + header_len) sum to 0xffff.
    let ihl = b.read_field(h, f("ipv4", "ihl"));
    let ihl = b.zext(ihl, 64);
    let header_len = b.shl_imm(ihl, 2);
    let start = b.iconst(64, 14);
    let end = b.add(start, header_len);
    let sum = b.window_sum(start, end);
    let folded = b.csum_fold(sum);
    let bad_sum = b.ne_imm(folded, 0xffff);
    drop_if(&mut b, bad_sum, DropReason::Ipv4Checksum);
    // ip.protocol() != 1 || ip.more_frags() || ip.frag_offset().value() != 0
    let protocol = b.read_field(h, f("ipv4", "protocol"));
    let c = b.ne_imm(protocol, 1);
    let c = or_else(&mut b, c, |b| b.read_field(h, f("ipv4", "more_frags")));
    let c = or_else(&mut b, c, |b| {
        let off = b.read_field(h, f("ipv4", "frag_offset"));
        b.ne_imm(off, 0)
    });
    drop_if(&mut b, c, DropReason::Unsupported);
    // let l4 = 14 + ip.header_len(); let end = 14 + ip.total_len() as usize;
    let ihl = b.read_field(h, f("ipv4", "ihl"));
    let ihl = b.zext(ihl, 64);
    let header_len = b.shl_imm(ihl, 2);
    let l4 = b.add_imm(header_len, 14);
    let total = b.read_field(h, f("ipv4", "total_len"));
    let total = b.zext(total, 64);
    let end = b.add_imm(total, 14);
    let src = b.read_field(h, f("ipv4", "src"));
    let ttl = b.read_field(h, f("ipv4", "ttl"));
    // let icmp = pkt.icmpv4_at(l4); if icmp.msg_type() != ECHO_REQUEST { drop }
    let msg_type = b.read_field(l4, f("icmpv4", "msg_type"));
    let not_request = b.ne_imm(msg_type, 8);
    drop_if(&mut b, not_request, DropReason::Unsupported);
    // if checksum::fold(pkt.ones_sum(l4, end)) != 0xffff { drop }
    let sum = b.ones_sum(l4, end);
    let folded = b.csum_fold(sum);
    let bad_sum = b.ne_imm(folded, 0xffff);
    drop_if(&mut b, bad_sum, DropReason::IcmpChecksum);
    let code = b.read_field(l4, f("icmpv4", "code"));
    let code = b.zext(code, 16);
    let icmp_sum = b.read_field(l4, f("icmpv4", "checksum"));
    // Swap the MACs.
    let eth_src = b.read_field(0, f("ethernet", "src"));
    let eth_dst = b.read_field(0, f("ethernet", "dst"));
    b.write_field(0, f("ethernet", "src"), eth_dst);
    b.write_field(0, f("ethernet", "dst"), eth_src);
    // let old_word = (ttl as u16) << 8 | 1;
    let ttl16 = b.zext(ttl, 16);
    let hi = b.shl_imm(ttl16, 8);
    let old_word = b.or_imm(hi, 1);
    let ip = b.reg_get(my_ip);
    b.write_field(h, f("ipv4", "src"), ip);
    b.write_field(h, f("ipv4", "dst"), src);
    let ttl64 = b.iconst(8, 64);
    b.write_field(h, f("ipv4", "ttl"), ttl64);
    let old_sum = b.read_field(h, f("ipv4", "checksum"));
    let new_word = b.iconst(16, 64 << 8 | 1);
    let c = b.csum_update16(old_sum, old_word, new_word);
    b.write_field(h, f("ipv4", "checksum"), c);
    // icmp.set_msg_type(ECHO_REPLY); icmp.set_checksum(update16(icmp_sum, 8 << 8 | code, code));
    let zero = b.iconst(8, 0);
    b.write_field(l4, f("icmpv4", "msg_type"), zero);
    let old = b.or_imm(code, 8 << 8);
    let c = b.csum_update16(icmp_sum, old, code);
    b.write_field(l4, f("icmpv4", "checksum"), c);
    b.counter_inc(replies);
    b.ret_reply();
    b.finish().unwrap_or_else(|e| panic!("icmp echo IR:\n{e}"))
}

/// A seeded xorshift generator: a failing case replays from its seed.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A frame's first bytes in hex, for failure messages.
pub fn hex(frame: &[u8]) -> String {
    let shown: Vec<String> = frame.iter().take(64).map(|b| format!("{b:02x}")).collect();
    let more = if frame.len() > 64 { " …" } else { "" };
    format!("{} bytes [{}{more}]", frame.len(), shown.join(" "))
}
