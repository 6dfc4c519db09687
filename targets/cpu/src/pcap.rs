//! Classic pcap files (the libpcap savefile format), read and written in Rust.
//!
//! The format is a 24-byte file header and a 16-byte header per record; its magic number tells
//! the byte order and whether the fraction of a timestamp is in micro- or nanoseconds. Reading
//! keeps what libpcap keeps: records whose capture was cut by the snap length (`caplen <
//! orig_len`) are handed out with both lengths, so the runner can count them as cut. Writing
//! produces little-endian nanosecond pcaps (magic 0xa1b23c4d), which tcpdump, tshark and
//! Wireshark open.
//! Doing this here rather than through libpcap means the CPU target needs nothing but Rust.

use std::io::{self, Read, Write};

/// The magic number of a microsecond pcap, as a number (the file holds it in its byte order).
const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// The magic number of a nanosecond pcap.
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// The file header's length.
pub const FILE_HEADER_LEN: u64 = 24;
/// A record header's length.
pub const RECORD_HEADER_LEN: u64 = 16;
/// libpcap refuses records longer than this (its `MAXIMUM_SNAPLEN`): such a length means a
/// corrupt file, not a jumbo frame.
const MAX_RECORD: u32 = 262_144;
/// The snap length written into output files: the largest libpcap reads, so a jumbo frame
/// (`--max-frame` up to 9018 and more) is never longer than the file says it may be.
const OUT_SNAPLEN: u32 = MAX_RECORD;

/// `DLT_EN10MB`: Ethernet.
pub const LINKTYPE_ETHERNET: u32 = 1;

/// Whether the first four bytes of a file are a classic pcap magic number.
pub fn is_pcap_magic(magic: [u8; 4]) -> bool {
    [MAGIC_MICROS, MAGIC_NANOS].iter().any(|&m| magic == m.to_le_bytes() || magic == m.to_be_bytes())
}

/// A classic pcap file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// The link type (`1` for Ethernet).
    pub linktype: u32,
    /// The snap length the capture was made with.
    pub snaplen: u32,
    /// Timestamps' fractions are nanoseconds (else microseconds).
    pub nanos: bool,
    /// The file's fields are big-endian.
    pub big_endian: bool,
}

/// One record as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The timestamp in nanoseconds since the epoch.
    pub timestamp: u64,
    /// The captured bytes (`caplen` of them).
    pub data: Vec<u8>,
    /// The frame's length on the wire (`orig_len`).
    pub wire_len: u32,
}

/// What went wrong reading a pcap.
#[derive(Debug)]
pub enum ReadError {
    /// The file ends inside its header or inside a record.
    Truncated(String),
    /// The bytes are not a pcap (bad magic, a record longer than any capture).
    Invalid(String),
    /// The file could not be read.
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Truncated(m) | ReadError::Invalid(m) => f.write_str(m),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads as many bytes as there are up to `buf.len()`; the count tells where the input ended.
pub fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A reader of classic pcap records.
pub struct PcapReader<R> {
    input: R,
    header: FileHeader,
}

impl<R: Read> PcapReader<R> {
    /// Reads the file header.
    pub fn new(mut input: R) -> Result<PcapReader<R>, ReadError> {
        let mut h = [0u8; FILE_HEADER_LEN as usize];
        let n = read_full(&mut input, &mut h).map_err(ReadError::Io)?;
        if n < 4 || !is_pcap_magic([h[0], h[1], h[2], h[3]]) {
            return Err(ReadError::Invalid("no pcap magic number".into()));
        }
        if n < h.len() {
            return Err(ReadError::Truncated(format!("{n} of the file header's 24 bytes")));
        }
        let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let big_endian = le != MAGIC_MICROS && le != MAGIC_NANOS;
        let word = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
        };
        let major = if big_endian { u16::from_be_bytes([h[4], h[5]]) } else { u16::from_le_bytes([h[4], h[5]]) };
        if major != 2 {
            // libpcap reads version 2 only (the format has been 2.4 since 1998).
            return Err(ReadError::Invalid(format!("pcap version {major}, not 2")));
        }
        let magic = word(0);
        let header = FileHeader { linktype: word(20) & 0x03ff_ffff, snaplen: word(16), nanos: magic == MAGIC_NANOS, big_endian };
        Ok(PcapReader { input, header })
    }

    /// The file header.
    pub fn header(&self) -> FileHeader {
        self.header
    }

    /// The next record, `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        let mut h = [0u8; RECORD_HEADER_LEN as usize];
        let n = read_full(&mut self.input, &mut h).map_err(ReadError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        if n < h.len() {
            return Err(ReadError::Truncated(format!("{n} of the record header's 16 bytes")));
        }
        let word = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if self.header.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
        };
        let (secs, frac, caplen, wire_len) = (word(0), word(4), word(8), word(12));
        if caplen > MAX_RECORD {
            return Err(ReadError::Invalid(format!(
                "a record claims {caplen} captured bytes, more than any capture holds ({MAX_RECORD})"
            )));
        }
        let mut data = vec![0u8; caplen as usize];
        let got = read_full(&mut self.input, &mut data).map_err(ReadError::Io)?;
        if got < data.len() {
            return Err(ReadError::Truncated(format!("{got} of the record's {caplen} bytes")));
        }
        let frac_ns = if self.header.nanos { frac as u64 } else { frac as u64 * 1000 };
        Ok(Some(Record { timestamp: secs as u64 * 1_000_000_000 + frac_ns, data, wire_len }))
    }
}

/// A writer of nanosecond pcaps.
pub struct PcapWriter<W: Write> {
    output: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header of an Ethernet capture.
    pub fn new(output: W) -> io::Result<PcapWriter<W>> {
        PcapWriter::with_linktype(output, LINKTYPE_ETHERNET)
    }

    /// Writes the file header of a capture of `linktype` (tests write other link types to
    /// check that they are refused).
    pub fn with_linktype(mut output: W, linktype: u32) -> io::Result<PcapWriter<W>> {
        let mut h = Vec::with_capacity(FILE_HEADER_LEN as usize);
        h.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&OUT_SNAPLEN.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        output.write_all(&h)?;
        Ok(PcapWriter { output })
    }

    /// Writes a record of `data`, captured whole.
    pub fn write(&mut self, timestamp: u64, data: &[u8]) -> io::Result<()> {
        self.write_cut(timestamp, data, data.len() as u32)
    }

    /// Writes a record of `data` from a frame of `wire_len` bytes on the wire.
    pub fn write_cut(&mut self, timestamp: u64, data: &[u8], wire_len: u32) -> io::Result<()> {
        let mut h = [0u8; RECORD_HEADER_LEN as usize];
        h[0..4].copy_from_slice(&((timestamp / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((timestamp % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&wire_len.to_le_bytes());
        self.output.write_all(&h)?;
        self.output.write_all(data)
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.output.flush()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn header(magic: u32, big: bool, linktype: u32) -> Vec<u8> {
        let w = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut h = Vec::new();
        h.extend_from_slice(&w(magic));
        let half = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        h.extend_from_slice(&half(2));
        h.extend_from_slice(&half(4));
        h.extend_from_slice(&w(0));
        h.extend_from_slice(&w(0));
        h.extend_from_slice(&w(96));
        h.extend_from_slice(&w(linktype));
        h
    }

    fn record(big: bool, secs: u32, frac: u32, data: &[u8], wire: u32) -> Vec<u8> {
        let w = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut r = Vec::new();
        for v in [secs, frac, data.len() as u32, wire] {
            r.extend_from_slice(&w(v));
        }
        r.extend_from_slice(data);
        r
    }

    #[test]
    fn every_magic_and_byte_order() {
        for (magic, scale) in [(MAGIC_MICROS, 1000u64), (MAGIC_NANOS, 1)] {
            for big in [false, true] {
                let mut f = header(magic, big, 1);
                f.extend(record(big, 3, 7, &[1, 2, 3], 60));
                let mut r = PcapReader::new(&f[..]).unwrap();
                assert_eq!(r.header().snaplen, 96);
                assert_eq!(r.header().linktype, 1);
                let rec = r.next_record().unwrap().unwrap();
                assert_eq!(rec, Record { timestamp: 3_000_000_000 + 7 * scale, data: vec![1, 2, 3], wire_len: 60 });
                assert!(r.next_record().unwrap().is_none());
            }
        }
    }

    #[test]
    fn written_files_read_back() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(1_234_567_890_123, &[9; 60]).unwrap();
        w.write_cut(5, &[1; 10], 1500).unwrap();
        let bytes = w.output;
        assert_eq!(&bytes[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        assert!(r.header().nanos);
        assert_eq!(r.next_record().unwrap().unwrap().timestamp, 1_234_567_890_123);
        assert_eq!(r.next_record().unwrap().unwrap().wire_len, 1500);
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn cut_files_say_where() {
        let mut f = header(MAGIC_NANOS, false, 1);
        assert!(matches!(PcapReader::new(&f[..10]), Err(ReadError::Truncated(_))));
        assert!(matches!(PcapReader::new(&b"hello world"[..]), Err(ReadError::Invalid(_))));
        f.extend(record(false, 0, 0, &[0; 20], 20));
        let whole = f.len();
        f.extend(record(false, 0, 0, &[0; 20], 20));
        for cut in [whole + 5, whole + 16 + 3] {
            let mut r = PcapReader::new(&f[..cut]).unwrap();
            assert!(r.next_record().unwrap().is_some());
            let e = r.next_record().unwrap_err();
            assert!(matches!(e, ReadError::Truncated(_)), "{e}");
        }
        let mut bogus = header(MAGIC_NANOS, false, 1);
        bogus.extend(record(false, 0, 0, &[], 20));
        bogus[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(PcapReader::new(&bogus[..]).unwrap().next_record(), Err(ReadError::Invalid(_))));
    }
}
