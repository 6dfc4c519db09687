#!/usr/bin/env bash
# Installs the Debian packages Emu's build and tests need. Idempotent: packages
# already present are not reinstalled, and apt is only consulted when one is missing.
set -euo pipefail

PACKAGES=(
  tcpdump          # tests check that output pcaps read back with `tcpdump -r`
  tshark           # tests decode replies and check checksums with tshark
  iproute2         # live tests build veth pairs and network namespaces
  iputils-ping     # live tests ping through the NF
  ethtool          # checksum offload off on test interfaces
  util-linux       # setpriv: tests run the tool without privileges
  mininet          # emu mininet (Debian's Mininet, driven by /usr/bin/python3)
  python3          # the interpreter Debian's Mininet is installed for
  net-tools        # ifconfig, which Mininet's LinuxBridge calls
  bridge-utils     # brctl: the Linux-bridge baseline of the Mininet benchmark
  memcached        # a real memcached server in the Mininet experiments
  libmemcached-tools # memcslap, memccp, memccat: real memcached clients
  python3-pymemcache # memcached-cache test: reads the server's contents over TCP
  iperf3           # TCP throughput through the NF switch
  verilator        # lints the HLS compiler's Verilog; the `emu sim` Verilator tier
  g++              # compiles Verilator's C++ (the Verilator tier's models, sim/src/verilator.rs)
  iverilog         # a second, event-driven simulator: the generated Verilog must read alike there
  yosys            # synthesizes the generated Verilog (synth_xilinx checks, emu synth)
  nextpnr-ice40    # places and routes for iCE40 (emu synth --board icebreaker)
  fpga-icestorm    # icepack: the iCE40 bitstream (emu synth --board)
  tcl              # tclsh: tests run emu netfpga's Vivado script with stubbed Vivado commands
  hping3           # real TCP SYNs against tcp-ping in Mininet (open and closed ports)
  nmap             # nmap -sS: a SYN scan of tcp-ping in Mininet
  netcat-openbsd   # nc: TCP and UDP flows through the firewall in Mininet
  curl             # HTTP through the firewall to python3 -m http.server in Mininet
  bind9-dnsutils   # dig: real DNS queries against dns-server in Mininet
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
