//! pcap and pcapng files: inputs merged by timestamp, one output file per port.
//!
//! Classic pcap is read and written by [`crate::pcap`]; pcapng is read with `pcap-file`. In a
//! pcapng input the interface id is the port. Neither needs libpcap.

use crate::device::{Device, Frame};
use crate::error::{Error, ErrorKind, Result};
use crate::pcap::{self, PcapReader, PcapWriter, ReadError};
use emu::{Port, Timestamp};
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// An input capture and the port its frames arrive on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    /// The port, or `None` for a pcapng whose interface ids are the ports (a classic pcap
    /// without a port goes to port 0).
    pub port: Option<Port>,
    /// The file.
    pub path: PathBuf,
}

impl FromStr for InputSpec {
    type Err = String;

    /// `PORT=FILE` or `FILE`.
    fn from_str(s: &str) -> core::result::Result<InputSpec, String> {
        match s.split_once('=') {
            Some((p, f)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                let port: Port = p.parse().map_err(|_| format!("`{p}` is not a port number (0..31)"))?;
                if port as usize >= emu::MAX_PORTS {
                    return Err(format!("port {port} is out of range; ports are 0..{}", emu::MAX_PORTS - 1));
                }
                Ok(InputSpec { port: Some(port), path: f.into() })
            }
            _ => Ok(InputSpec { port: None, path: s.into() }),
        }
    }
}

const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

enum Source {
    Classic(PcapReader<BufReader<File>>),
    Ng { reader: PcapNgReader<BufReader<File>>, tsresol: Vec<u8> },
}

/// One capture file being read.
pub struct CaptureReader {
    path: PathBuf,
    port: Option<Port>,
    source: Source,
    /// Records read so far.
    records: u64,
    /// Bytes consumed so far (file header and whole records).
    bytes: u64,
}

fn not_pcap(path: &Path, what: &str) -> Error {
    Error::new(
        ErrorKind::NotPcap,
        format!(
            "{}: not a pcap or pcapng file ({what}); give a capture written by tcpdump, Wireshark or emu",
            path.display()
        ),
    )
}

fn not_ethernet(path: &Path, name: &str, code: u32) -> Error {
    Error::new(
        ErrorKind::LinkType,
        format!(
            "{}: link type {name} ({code}) is not Ethernet; Emu NFs take Ethernet frames (DLT_EN10MB, 1) — \
             capture on an Ethernet interface, not `any` or a tunnel",
            path.display()
        ),
    )
}

impl CaptureReader {
    /// Opens `spec.path`, telling pcap from pcapng by its first bytes.
    pub fn open(spec: &InputSpec) -> Result<CaptureReader> {
        let path = spec.path.clone();
        let mut file = File::open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                Error::new(ErrorKind::NotFound, format!("{}: no such file; check the path given to --in", path.display()))
            }
            _ => Error::io(&path.display().to_string(), e),
        })?;
        let mut magic = [0u8; 4];
        let n = pcap::read_full(&mut file, &mut magic).map_err(|e| Error::io(&path.display().to_string(), e))?;
        if n == 0 {
            return Err(not_pcap(&path, "the file is empty"));
        }
        if n < 4 {
            return Err(not_pcap(&path, &format!("only {n} bytes long")));
        }
        let source = if pcap::is_pcap_magic(magic) {
            let f = File::open(&path).map_err(|e| Error::io(&path.display().to_string(), e))?;
            let reader = PcapReader::new(BufReader::new(f)).map_err(|e| match e {
                ReadError::Truncated(m) => {
                    Error::new(ErrorKind::Truncated, format!("{}: the file header is cut short ({m})", path.display()))
                }
                ReadError::Invalid(m) => not_pcap(&path, &m),
                ReadError::Io(e) => Error::io(&path.display().to_string(), e),
            })?;
            let lt = reader.header().linktype;
            if lt != pcap::LINKTYPE_ETHERNET {
                return Err(not_ethernet(&path, &format!("{:?}", DataLink::from(lt)), lt));
            }
            Source::Classic(reader)
        } else if magic == PCAPNG_MAGIC {
            let f = File::open(&path).map_err(|e| Error::io(&path.display().to_string(), e))?;
            let reader = PcapNgReader::new(BufReader::new(f)).map_err(|e| {
                Error::new(ErrorKind::Truncated, format!("{}: cannot read the pcapng section header: {e}", path.display()))
            })?;
            Source::Ng { reader, tsresol: Vec::new() }
        } else {
            let hex: Vec<String> = magic.iter().map(|b| format!("{b:02x}")).collect();
            return Err(not_pcap(&path, &format!("it starts with {}", hex.join(" "))));
        };
        let bytes = if matches!(source, Source::Classic(_)) { pcap::FILE_HEADER_LEN } else { 0 };
        Ok(CaptureReader { path, port: spec.port, source, records: 0, bytes })
    }

    fn truncated(&self, detail: &str) -> Error {
        Error::new(
            ErrorKind::Truncated,
            format!(
                "{}: the capture is truncated: it ends inside record {} after {} whole records ({} bytes read); \
                 the frames before it were processed ({detail})",
                self.path.display(),
                self.records + 1,
                self.records,
                self.bytes
            ),
        )
    }

    /// The next frame, `None` at the end of the file.
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        match &mut self.source {
            Source::Classic(reader) => match reader.next_record() {
                Ok(Some(r)) => {
                    self.records += 1;
                    self.bytes += pcap::RECORD_HEADER_LEN + r.data.len() as u64;
                    let port = self.port.unwrap_or(0);
                    Ok(Some(Frame { port, timestamp: r.timestamp, wire_len: r.wire_len as usize, data: r.data }))
                }
                Ok(None) => Ok(None),
                Err(ReadError::Io(e)) => Err(Error::io(&self.path.display().to_string(), e)),
                Err(ReadError::Invalid(m)) => Err(Error::new(
                    ErrorKind::NotPcap,
                    format!("{}: record {} is corrupt ({m}); the frames before it were processed", self.path.display(), self.records + 1),
                )),
                Err(e) => Err(self.truncated(&format!("pcap: {e}"))),
            },
            Source::Ng { .. } => self.next_ng(),
        }
    }

    fn next_ng(&mut self) -> Result<Option<Frame>> {
        loop {
            let Source::Ng { reader, tsresol } = &mut self.source else { unreachable!() };
            let block = match reader.next_block() {
                None => return Ok(None),
                Some(Err(e)) => return Err(self.truncated(&format!("pcapng: {e}"))),
                Some(Ok(b)) => b,
            };
            match block {
                Block::InterfaceDescription(idb) => {
                    if idb.linktype != DataLink::ETHERNET {
                        let code = u32::from(idb.linktype);
                        return Err(not_ethernet(&self.path, &format!("{:?}", idb.linktype), code));
                    }
                    let r = idb
                        .options
                        .iter()
                        .find_map(|o| if let InterfaceDescriptionOption::IfTsResol(r) = o { Some(*r) } else { None })
                        .unwrap_or(6);
                    tsresol.push(r);
                }
                Block::EnhancedPacket(epb) => {
                    let iface = epb.interface_id as usize;
                    let Some(&r) = tsresol.get(iface) else {
                        return Err(Error::new(
                            ErrorKind::NotPcap,
                            format!("{}: a packet names interface {iface}, which the file never describes", self.path.display()),
                        ));
                    };
                    let port = match self.port {
                        Some(p) => p,
                        None => Port::try_from(iface).ok().filter(|&p| (p as usize) < emu::MAX_PORTS).ok_or_else(|| {
                            Error::new(
                                ErrorKind::BadPort,
                                format!("{}: interface id {iface} is past the last port ({})", self.path.display(), emu::MAX_PORTS - 1),
                            )
                        })?,
                    };
                    let ts = to_nanos(epb.timestamp.as_nanos() as u64, r);
                    let data = epb.data.to_vec();
                    self.records += 1;
                    return Ok(Some(Frame { port, timestamp: ts, wire_len: epb.original_len as usize, data }));
                }
                Block::SimplePacket(spb) => {
                    self.records += 1;
                    let data = spb.data.to_vec();
                    return Ok(Some(Frame { port: self.port.unwrap_or(0), timestamp: 0, wire_len: spb.original_len as usize, data }));
                }
                _ => {}
            }
        }
    }
}

/// A pcapng timestamp in units of the interface's `if_tsresol` to nanoseconds.
fn to_nanos(raw: u64, tsresol: u8) -> u64 {
    let exp = (tsresol & 0x7f) as u32;
    if tsresol & 0x80 != 0 {
        // Negative power of two.
        ((raw as u128 * 1_000_000_000) >> exp) as u64
    } else if exp <= 9 {
        raw.saturating_mul(10u64.pow(9 - exp))
    } else {
        raw / 10u64.pow(exp - 9)
    }
}


/// Writes frames of several ports into one pcapng file, an interface per port (named
/// `port<N>`, nanosecond timestamps): Wireshark opens it, and `--in FILE` reads each frame back
/// on its port.
pub struct PortsWriter<W: std::io::Write> {
    w: pcap_file::pcapng::PcapNgWriter<W>,
    ports: usize,
}

impl PortsWriter<BufWriter<File>> {
    /// Creates `path` for frames of ports `0..ports`.
    pub fn create(path: &Path, ports: usize) -> Result<PortsWriter<BufWriter<File>>> {
        let f = File::create(path).map_err(|e| Error::new(ErrorKind::Io, format!("{}: cannot create: {e}", path.display())))?;
        PortsWriter::new(BufWriter::new(f), ports)
    }
}

impl<W: std::io::Write> PortsWriter<W> {
    /// A writer of frames of ports `0..ports` into `out`.
    pub fn new(out: W, ports: usize) -> Result<PortsWriter<W>> {
        use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock;
        let bad = |e: pcap_file::PcapError| Error::new(ErrorKind::Io, format!("pcapng: {e}"));
        let mut w = pcap_file::pcapng::PcapNgWriter::new(out).map_err(bad)?;
        for p in 0..ports {
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: 0xffff,
                options: vec![
                    InterfaceDescriptionOption::IfName(format!("port{p}").into()),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            w.write_pcapng_block(idb).map_err(bad)?;
        }
        Ok(PortsWriter { w, ports })
    }

    /// Writes one frame that arrived on `port` at `timestamp` (ns).
    pub fn write(&mut self, port: Port, timestamp: Timestamp, data: &[u8]) -> Result<()> {
        use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
        if port as usize >= self.ports {
            return Err(Error::new(ErrorKind::BadPort, format!("port {port}: the file has ports 0..{}", self.ports)));
        }
        let epb = EnhancedPacketBlock {
            interface_id: port as u32,
            timestamp: std::time::Duration::from_nanos(timestamp),
            original_len: data.len() as u32,
            data: data.into(),
            options: vec![],
        };
        self.w.write_pcapng_block(epb).map_err(|e| Error::new(ErrorKind::Io, format!("pcapng: {e}")))?;
        Ok(())
    }

    /// Flushes and hands back the output.
    pub fn finish(self) -> Result<W> {
        let mut out = self.w.into_inner();
        out.flush().map_err(|e| Error::io("pcapng", e))?;
        Ok(out)
    }
}

/// Reads captures (merged by timestamp; ties go to the input given first) and writes
/// `port<N>.pcap` for each port into a directory.
pub struct PcapDevice {
    readers: Vec<CaptureReader>,
    heads: Vec<Option<Frame>>,
    /// A read error met while fetching ahead: reported after the frame before it is handed out.
    failed: Option<Error>,
    writers: Vec<PcapWriter<BufWriter<File>>>,
    out_paths: Vec<PathBuf>,
}

impl PcapDevice {
    /// Opens every input and creates `out_dir/port0.pcap` … `port<ports-1>.pcap`.
    pub fn new(inputs: &[InputSpec], out_dir: &Path, ports: usize) -> Result<PcapDevice> {
        let mut readers = Vec::new();
        for spec in inputs {
            readers.push(CaptureReader::open(spec)?);
        }
        std::fs::create_dir_all(out_dir).map_err(|e| Error::io(&out_dir.display().to_string(), e))?;
        let mut writers = Vec::new();
        let mut out_paths = Vec::new();
        for port in 0..ports {
            let path = out_dir.join(format!("port{port}.pcap"));
            let w = File::create(&path)
                .and_then(|f| PcapWriter::new(BufWriter::new(f)))
                .map_err(|e| Error::new(ErrorKind::Io, format!("{}: cannot create: {e}", path.display())))?;
            writers.push(w);
            out_paths.push(path);
        }
        let heads = vec![None; readers.len()];
        let mut dev = PcapDevice { readers, heads, failed: None, writers, out_paths };
        for i in 0..dev.readers.len() {
            dev.heads[i] = dev.readers[i].next_frame()?;
        }
        Ok(dev)
    }

    /// The output files, index = port.
    pub fn output_paths(&self) -> &[PathBuf] {
        &self.out_paths
    }
}

impl Device for PcapDevice {
    fn receive(&mut self) -> Result<Option<Frame>> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let next = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|f| (f.timestamp, i)))
            .min();
        let Some((_, i)) = next else { return Ok(None) };
        let frame = self.heads[i].take();
        match self.readers[i].next_frame() {
            Ok(f) => self.heads[i] = f,
            Err(e) => self.failed = Some(e),
        }
        Ok(frame)
    }

    fn transmit(&mut self, port: Port, data: &[u8], timestamp: Timestamp) -> Result<()> {
        let w = self.writers.get_mut(port as usize).ok_or_else(|| {
            Error::new(ErrorKind::BadPort, format!("no output file for port {port}"))
        })?;
        w.write(timestamp, data).map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", self.out_paths[port as usize].display())))?;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        for (w, path) in self.writers.iter_mut().zip(&self.out_paths) {
            w.flush().map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn input_specs() {
        assert_eq!("2=a.pcap".parse::<InputSpec>().unwrap(), InputSpec { port: Some(2), path: "a.pcap".into() });
        assert_eq!("a.pcapng".parse::<InputSpec>().unwrap(), InputSpec { port: None, path: "a.pcapng".into() });
        assert_eq!("dir/x=y.pcap".parse::<InputSpec>().unwrap().port, None);
        assert!("40=a.pcap".parse::<InputSpec>().unwrap_err().contains("out of range"));
    }

    #[test]
    fn pcapng_resolutions() {
        assert_eq!(to_nanos(1_500_000, 6), 1_500_000_000);
        assert_eq!(to_nanos(7, 9), 7);
        assert_eq!(to_nanos(3, 0), 3_000_000_000);
        assert_eq!(to_nanos(1 << 10, 0x80 | 10), 1_000_000_000);
    }
}
