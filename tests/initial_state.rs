//! State the NF's constructor fills reaches every tier: an `Array` of per-port MACs, an
//! `Array` of counts that start above zero, a `Register` and a plain field, set in `new` on
//! the CPU, are what the IR interpreter, the cycle model and the Verilog start with (the
//! descriptor hands them over through `NfDescriptor::initial_state`, with no list of its own).
//! Before, such arrays were all zeros off the CPU and every frame differed.

mod nf_common;

use emu::{Config, NfDescriptor};
use emu_hls::backend::model::Outcome;
use nf_common::{assert_agree, outcomes};

/// An NF as a user writes one: per-port addresses set up once, by the constructor.
#[emu::nf(ports = 4, window = 64)]
pub mod port_addresses {
    use emu::prelude::*;

    /// Each port's own MAC, the router's address and per-port frame numbers.
    #[derive(Debug)]
    pub struct PortAddresses {
        /// The MAC each port sends from.
        pub port_macs: Array<Mac, 4>,
        /// The next frame's number per input port: port `p` counts from `p * 1000 + 1`.
        pub numbers: Array<u32, 4>,
        /// Frames to this address are answered, not routed.
        pub router_ip: Register<Ipv4Addr>,
        /// Where routed frames go.
        pub next_hop: Mac,
    }

    impl PortAddresses {
        /// Port `p`'s MAC is `02:00:00:00:aa:0p+1`.
        pub fn new() -> PortAddresses {
            let mut port_macs = Array::new();
            let mut numbers = Array::new();
            for p in 0..4 {
                port_macs.set(p, Mac::from_bytes([2, 0, 0, 0, 0xaa, p as u8 + 1]));
                numbers.set(p, p as u32 * 1000 + 1);
            }
            PortAddresses {
                port_macs,
                numbers,
                router_ip: Register::new(Ipv4Addr::new(10, 0, 0, 254)),
                next_hop: Mac::from_bytes([2, 0, 0, 0, 0, 0x99]),
            }
        }
    }

    impl NetworkFunction for PortAddresses {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            if pkt.ethernet().ethertype() != 0x0800 {
                return Action::Drop(DropReason::NotForUs);
            }
            let port = meta.in_port as usize;
            let number = self.numbers.get(port);
            self.numbers.set(port, number + 1);
            let dst = pkt.ipv4().dst();
            let mut ip = pkt.ipv4_mut();
            ip.set_ident(number as u16);
            if dst == self.router_ip.get() {
                let mut eth = pkt.ethernet_mut();
                let asker = eth.src();
                eth.set_dst(asker);
                eth.set_src(self.port_macs.get(port));
                return Action::Reply;
            }
            let out = (meta.in_port + 1) % 4;
            let mut eth = pkt.ethernet_mut();
            eth.set_src(self.port_macs.get(out as usize));
            eth.set_dst(self.next_hop);
            Action::Forward(out)
        }
    }
}

static PORT_ADDRESSES: NfDescriptor = NfDescriptor {
    name: "port-addresses",
    summary: "per-port MACs set by the constructor",
    ports: port_addresses::HLS_PORTS,
    window: port_addresses::HLS_WINDOW,
    params: &[],
    build: |_| Ok(Box::new(port_addresses::PortAddresses::new())),
    hls_source: Some(port_addresses::HLS_SOURCE),
};

fn ipv4(src: u8, dst: [u8; 4]) -> Vec<u8> {
    let (a, b) = (emu::Ipv4Addr::new(10, 0, 0, src), emu::Ipv4Addr::new(dst[0], dst[1], dst[2], dst[3]));
    let payload = emu::craft::udp(a, 1000, b, 2000, b"hello");
    let (to, from) = (emu::Mac::from_bytes([2, 0, 0, 0, 0xaa, 1]), emu::Mac::from_bytes([2, 0, 0, 0, 0, src]));
    emu::craft::ethernet(to, from, 0x0800, &payload)
}

/// The arrays' initial words are in the Verilog, and yosys maps them (an `initial` block that
/// zeroes the RAM, then sets the constructor's words) without a complaint about them.
#[test]
fn yosys_takes_the_initial_words() {
    let design = emu_hls::backend::Design::from_descriptor(&PORT_ADDRESSES, &Config::new(), 64, 1518).unwrap();
    let verilog = emu_hls::backend::rtl::verilog(&design).unwrap();
    assert!(verilog.contains("48'h2000000aa04"), "port 3's MAC is a word of the RAM's initial contents");
    let stats = emu_hls::hw::tools::yosys_synth_xilinx(&verilog, &design.top_name()).unwrap_or_else(|e| panic!("{e}"));
    let about_init: Vec<&String> = stats.warnings.iter().filter(|w| w.contains("init") || w.contains("memory")).collect();
    assert!(about_init.is_empty(), "{about_init:?}");
}

#[test]
fn constructor_filled_arrays_and_registers_agree_on_all_four_tiers() {
    let frames: Vec<(Vec<u8>, u8)> = (0..24u8)
        .map(|i| {
            let dst = if i % 3 == 0 { [10, 0, 0, 254] } else { [10, 1, 0, i] };
            (ipv4(i + 1, dst), i % 4)
        })
        .collect();
    let tiers = outcomes(&PORT_ADDRESSES, &Config::new(), &["ir", "cycle", "verilator"], &frames);
    assert_agree(&PORT_ADDRESSES, &frames, &tiers);
    // And what they agree on is the constructor's state, not zeros.
    let (_, cpu) = &tiers[0];
    let Outcome::Sent(mask, first) = &cpu[0] else { panic!("{:?}", cpu[0]) };
    assert_eq!((*mask, &first[6..12], &first[18..20]), (1, &[2, 0, 0, 0, 0xaa, 1][..], &[0, 1][..]), "a reply from port 0");
    let Outcome::Sent(mask, second) = &cpu[1] else { panic!("{:?}", cpu[1]) };
    assert_eq!(*mask, 1 << 2, "port 1 routes to port 2");
    assert_eq!((&second[0..6], &second[6..12]), (&[2, 0, 0, 0, 0, 0x99][..], &[2, 0, 0, 0, 0xaa, 3][..]));
    assert_eq!(&second[18..20], &1001u16.to_be_bytes(), "port 1 counts from 1001");
}

/// An NF whose constructor leaves state the hardware cannot start with.
#[emu::nf(ports = 2, window = 64)]
pub mod preloaded {
    use emu::prelude::*;

    /// Flows seen, and a counter the constructor starts at 3.
    #[derive(Debug, Default)]
    pub struct Preloaded {
        /// Known flows.
        pub flows: HashTable<u32, u8, 8, 2>,
        /// Frames seen.
        pub frames: Counter,
    }

    impl NetworkFunction for Preloaded {
        fn process(&mut self, pkt: &mut Packet, _meta: &Meta) -> Action {
            self.frames.inc();
            match self.flows.get(pkt.ipv4().src().0) {
                Some(p) => Action::Forward(p & 1),
                None => Action::Drop(DropReason::NoRoute),
            }
        }
    }
}

fn preloaded(flows: bool, frames: u64) -> Box<preloaded::Preloaded> {
    let mut nf = Box::<preloaded::Preloaded>::default();
    if flows {
        nf.flows.insert(0x0a00_0001, 1);
    }
    nf.frames.add(frames);
    nf
}

#[test]
fn state_the_hardware_cannot_start_with_is_an_error_that_names_it() {
    let desc = |build: fn(&Config) -> Result<Box<dyn emu::NetworkFunction + Send>, emu::ConfigError>| NfDescriptor {
        name: "preloaded",
        summary: "state the hardware cannot start with",
        ports: preloaded::HLS_PORTS,
        window: preloaded::HLS_WINDOW,
        params: &[],
        build,
        hls_source: Some(preloaded::HLS_SOURCE),
    };
    let hw = |d: &NfDescriptor| emu_hls::backend::Design::from_descriptor(d, &Config::new(), 64, 1518).err();
    let ir = |d: &NfDescriptor| emu_sim::ir_tier::IrNf::build(d, &Config::new()).err();
    let fine = desc(|_| Ok(preloaded(false, 0)));
    assert_eq!((hw(&fine), ir(&fine)), (None, None));
    let flows = desc(|_| Ok(preloaded(true, 0)));
    let e = hw(&flows).expect("a filled hash table is refused");
    assert!(e.starts_with("`flows` (a hash_table) is not empty when the NF's constructor returns"), "{e}");
    assert_eq!(ir(&flows), Some(format!("preloaded: {e}")));
    let counted = desc(|_| Ok(preloaded(false, 3)));
    let e = hw(&counted).expect("a counter that does not start at 0 is refused");
    assert!(e.starts_with("`frames` is a counter the NF's constructor leaves at 3"), "{e}");
}
