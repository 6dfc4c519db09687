//! The `verilator` tier: the HLS back end's Verilog ([`emu_hls::backend::rtl`]) compiled by
//! Verilator into a shared library, loaded at run time and clocked through
//! [`emu_hls::backend::top::Clocked`], so [`emu_hls::backend::model::Driver`] drives it
//! exactly as it drives the cycle model.
//!
//! # Building
//!
//! [`VerilatorModel::build`] writes each module of the design to a file of its own, runs
//! `verilator --cc -Wno-WIDTH` on them, and compiles the generated C++ and a small C shim
//! (`verilator_shim.cpp` beside this file) with g++ `-O2 -fPIC`, at most two compilers at a
//! time, then links them with Verilator's runtime (`verilated.cpp` and its kin, compiled once
//! per tool version and flags) into `libemu_vl.so` with `g++ -shared`.
//!
//! Models are cached by a content hash (FNV-1a 64, stable across Rust versions) of the
//! Verilog, the shim, the tools' versions and every flag, in `$EMU_CACHE_DIR/verilator/<hash>`,
//! else `$XDG_CACHE_HOME/emu/verilator/<hash>`, else `$HOME/.cache/emu/verilator/<hash>`; the
//! runtime's objects beside them in `runtime-<hash>`. Each is built in a temporary sibling
//! directory and renamed into place, so no one ever loads half a model; a lock file beside it
//! makes concurrent builders of the same model (tests run in parallel) wait for the first
//! instead of compiling it twice.
//!
//! # The shim's C ABI
//!
//! | Function | What |
//! |---|---|
//! | `uint32_t emu_vl_abi(void)` | the interface's version (2) |
//! | `uint32_t emu_vl_data_bits(void)` | the SUME data width built for, 64 or 256 |
//! | `uint32_t emu_vl_traced(void)` | 1 when built with `--trace` |
//! | `void* emu_vl_new(void)` / `void emu_vl_free(void*)` | a model (own `VerilatedContext`) |
//! | `void emu_vl_set_clock(void*, uint8_t)` | `axis_aclk` |
//! | `void emu_vl_set_inputs(void*, const EmuInputs*)` | every other input |
//! | `void emu_vl_eval(void*)` | `eval()` |
//! | `void emu_vl_get_outputs(void*, EmuOutputs*)` | every output |
//! | `int emu_vl_trace_open(void*, const char*)` | start a VCD (0, or −1 without `--trace`) |
//! | `void emu_vl_trace_dump(void*, uint64_t)` / `void emu_vl_trace_close(void*)` | write a time step / finish |
//! | `uint32_t emu_vl_debug(void)` | 1 when the NF has the debug unit's register port |
//! | `void emu_vl_set_debug(void*, const EmuDebugIn*)` / `void emu_vl_get_debug(void*, EmuDebugOut*)` | its request for the next edge / its response |
//!
//! `EmuInputs` and `EmuOutputs` are [`RawInputs`] and [`RawOutputs`]: wide ports (`tdata`,
//! `tuser`) as arrays of 32-bit words, least significant first (frame byte `i` of a beat is
//! bits `[8i+7:8i]`, so byte `4w + k` is byte `k` of word `w`), `tkeep` as a `uint64_t`.

use emu_core::DropReason;
use emu_hls::backend::model::{Beat, Inputs, Outputs};
use emu_hls::backend::top::Clocked;
use emu_hls::backend::{rtl, Design};
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CString};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::cache::Fnv64;
use crate::cache::cached_dir;

/// Where models are cached: [`crate::cache::root`]`("verilator")`.
pub fn cache_root() -> PathBuf {
    crate::cache::root("verilator")
}

/// The shim's source, compiled into every model.
pub const SHIM: &str = include_str!("verilator_shim.cpp");

/// The shim's interface version (`emu_vl_abi`).
const ABI: u32 = 2;

/// The shared library in a model's directory.
const LIB: &str = "libemu_vl.so";

/// Verilator's flags besides the top module and the files.
const VERILATOR_FLAGS: &[&str] = &["--cc", "-Wno-WIDTH"];

/// g++'s flags for every translation unit (besides the optimization level, includes and
/// defines).
const CXX_FLAGS: &[&str] = &[
    "-std=gnu++17",
    "-fPIC",
    "-fvisibility=hidden",
    "-fvisibility-inlines-hidden",
    "-faligned-new",
    "-fcf-protection=none",
    "-w",
];

/// g++'s flags to link the shared library. `-Bsymbolic` and hidden visibility keep each
/// model's copy of the Verilator runtime and of its classes to itself: two models of the same
/// top module (64 and 256 bits) can be loaded in one process.
const LINK_FLAGS: &[&str] = &["-shared", "-fPIC", "-O2", "-Wl,-Bsymbolic", "-Wl,--no-undefined", "-pthread"];
const LINK_LIBS: &[&str] = &["-latomic"];

/// `EmuInputs` of the shim: every input but the clock.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawInputs {
    /// `s_axis_tdata` as 32-bit words, least significant first (the first 2 or 8 used).
    pub s_axis_tdata: [u32; 8],
    /// `s_axis_tuser`, likewise.
    pub s_axis_tuser: [u32; 4],
    /// `s_axis_tkeep`.
    pub s_axis_tkeep: u64,
    /// `axis_resetn`.
    pub axis_resetn: u8,
    /// `s_axis_tvalid`.
    pub s_axis_tvalid: u8,
    /// `s_axis_tlast`.
    pub s_axis_tlast: u8,
    /// `m_axis_tready`.
    pub m_axis_tready: u8,
}

/// `EmuOutputs` of the shim.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawOutputs {
    /// `m_axis_tdata` as 32-bit words, least significant first.
    pub m_axis_tdata: [u32; 8],
    /// `m_axis_tuser`, likewise.
    pub m_axis_tuser: [u32; 4],
    /// `m_axis_tkeep`.
    pub m_axis_tkeep: u64,
    /// `s_axis_tready`.
    pub s_axis_tready: u8,
    /// `m_axis_tvalid`.
    pub m_axis_tvalid: u8,
    /// `m_axis_tlast`.
    pub m_axis_tlast: u8,
    /// `stat_drop_valid`.
    pub stat_drop_valid: u8,
    /// `stat_drop_reason`.
    pub stat_drop_reason: u8,
}

/// `EmuDebugIn` of the shim: a request on the debug unit's register port.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RawDebugIn {
    addr: u32,
    wdata: u32,
    valid: u8,
    write: u8,
}

/// `EmuDebugOut` of the shim.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct RawDebugOut {
    rdata: u32,
    valid: u8,
}

/// A request on the debug unit's register port (emu_hls::backend::debug).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugRequest {
    /// Read the word at the address.
    Read(u32),
    /// Write the word to the address.
    Write(u32, u32),
}

type Handle = *mut c_void;

/// The shim's functions, valid while `_lib` is loaded.
struct Api {
    new: unsafe extern "C" fn() -> Handle,
    free: unsafe extern "C" fn(Handle),
    set_clock: unsafe extern "C" fn(Handle, u8),
    set_inputs: unsafe extern "C" fn(Handle, *const RawInputs),
    eval: unsafe extern "C" fn(Handle),
    get_outputs: unsafe extern "C" fn(Handle, *mut RawOutputs),
    trace_open: unsafe extern "C" fn(Handle, *const c_char) -> c_int,
    trace_dump: unsafe extern "C" fn(Handle, u64),
    trace_close: unsafe extern "C" fn(Handle),
    set_debug: unsafe extern "C" fn(Handle, *const RawDebugIn),
    get_debug: unsafe extern "C" fn(Handle, *mut RawDebugOut),
    debug: bool,
    data_bits: u32,
    traced: bool,
    _lib: Library,
}

impl Api {
    fn load(path: &Path) -> Result<Api, String> {
        let err = |e: libloading::Error| format!("cannot load the Verilator model {}: {e}", path.display());
        // SAFETY: the library is one this module built from the shim; loading it runs only
        // the C++ runtime's static initializers.
        let lib = unsafe { Library::new(path) }.map_err(err)?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the shim defines the symbol with this signature (`verilator_shim.cpp`).
                *unsafe { lib.get($name) }.map_err(err)?
            };
        }
        let abi: unsafe extern "C" fn() -> u32 = sym!(b"emu_vl_abi\0");
        let data_bits: unsafe extern "C" fn() -> u32 = sym!(b"emu_vl_data_bits\0");
        let traced: unsafe extern "C" fn() -> u32 = sym!(b"emu_vl_traced\0");
        // SAFETY: plain functions without arguments.
        let (abi, data_bits, traced) = unsafe { (abi(), data_bits(), traced() != 0) };
        if abi != ABI {
            return Err(format!("{} has shim interface {abi}, not {ABI}: delete it and rebuild", path.display()));
        }
        let debug: unsafe extern "C" fn() -> u32 = sym!(b"emu_vl_debug\0");
        // SAFETY: as above.
        let debug = unsafe { debug() != 0 };
        Ok(Api {
            new: sym!(b"emu_vl_new\0"),
            free: sym!(b"emu_vl_free\0"),
            set_clock: sym!(b"emu_vl_set_clock\0"),
            set_inputs: sym!(b"emu_vl_set_inputs\0"),
            eval: sym!(b"emu_vl_eval\0"),
            get_outputs: sym!(b"emu_vl_get_outputs\0"),
            trace_open: sym!(b"emu_vl_trace_open\0"),
            trace_dump: sym!(b"emu_vl_trace_dump\0"),
            trace_close: sym!(b"emu_vl_trace_close\0"),
            set_debug: sym!(b"emu_vl_set_debug\0"),
            get_debug: sym!(b"emu_vl_get_debug\0"),
            debug,
            data_bits,
            traced,
            _lib: lib,
        })
    }
}

/// How a model was had.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildInfo {
    /// It was in the cache (or another process was building it and this one waited).
    pub cached: bool,
    /// Its directory: the Verilog (`rtl/`), Verilator's C++ (`obj/`), `build.log`, the library.
    pub dir: PathBuf,
    /// Seconds from the call to a loaded model.
    pub seconds: f64,
}

/// The design's Verilog under Verilator, clocked like [`emu_hls::backend::top::SumeTop`].
pub struct VerilatorModel {
    api: Arc<Api>,
    model: Handle,
    bus_bytes: usize,
    inputs: RawInputs,
    /// VCD time of the next dump (10 per cycle: the clock low at 10n, high at 10n + 5).
    time: u64,
    tracing: bool,
    /// Tracing but not writing time steps (outside the frames asked for).
    paused: bool,
    tdata_fault: Option<Vec<u8>>,
    dir: PathBuf,
    /// The debug request for the next edge (cleared by it).
    debug_in: RawDebugIn,
}

// SAFETY: the model's C++ objects belong to this value alone (their own `VerilatedContext`)
// and are only touched through `&mut self` or, for reads, `&self`; nothing refers to the thread
// that made them.
unsafe impl Send for VerilatorModel {}

impl Drop for VerilatorModel {
    fn drop(&mut self) {
        // SAFETY: `model` came from this library's `emu_vl_new` and is freed once.
        unsafe {
            (self.api.trace_close)(self.model);
            (self.api.free)(self.model);
        }
    }
}

const SETUP: &str = "the Verilator tier needs Debian's verilator and g++: run scripts/setup.sh";

fn spawn_error(cmd: &Command, e: std::io::Error) -> String {
    if e.kind() == ErrorKind::NotFound {
        format!("cannot run `{}`: not found ({SETUP})", cmd.get_program().to_string_lossy())
    } else {
        format!("cannot run {cmd:?}: {e}")
    }
}

/// Waits for a tool; its output, logged, or an error with the output's tail.
fn finish(shown: &str, out: std::process::Output, log: &mut String) -> Result<String, String> {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    log.push_str(&format!("$ {shown}\n{text}\n"));
    if !out.status.success() {
        return Err(format!("{shown} failed ({}):\n{}\n({SETUP})", out.status, tail(&text, 40)));
    }
    Ok(text)
}

/// Runs a tool to completion.
fn run(cmd: &mut Command, log: &mut String) -> Result<String, String> {
    let out = cmd.output().map_err(|e| spawn_error(cmd, e))?;
    finish(&format!("{cmd:?}"), out, log)
}

/// Runs compilers, at most two at a time (the machines have two cores).
fn run_all(cmds: Vec<Command>, log: &mut String) -> Result<(), String> {
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let mut running: std::collections::VecDeque<(Child, String)> = Default::default();
    let mut result = Ok(());
    for mut cmd in cmds {
        if running.len() >= jobs {
            let (child, shown) = running.pop_front().expect("a running job");
            result = result.and(
                child
                    .wait_with_output()
                    .map_err(|e| format!("{shown}: {e}"))
                    .and_then(|o| finish(&shown, o, log).map(drop)),
            );
        }
        if result.is_err() {
            break;
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = cmd.spawn().map_err(|e| spawn_error(&cmd, e))?;
        running.push_back((child, format!("{cmd:?}")));
    }
    for (child, shown) in running {
        let r = child.wait_with_output().map_err(|e| format!("{shown}: {e}")).and_then(|o| finish(&shown, o, log));
        result = result.and(r.map(drop));
    }
    result
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The tools, asked once per process: `verilator --version`, `g++ -dumpfullversion` and
/// Verilator's `VERILATOR_ROOT` (its include directory is `$VERILATOR_ROOT/include`).
struct Tools {
    verilator: String,
    gxx: String,
    root: PathBuf,
}

fn tools() -> Result<&'static Tools, String> {
    static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();
    TOOLS
        .get_or_init(|| {
            let mut log = String::new();
            let verilator = run(Command::new("verilator").arg("--version"), &mut log)?.trim().to_string();
            let gxx = run(Command::new("g++").arg("-dumpfullversion"), &mut log)?.trim().to_string();
            let root = run(Command::new("verilator").args(["--getenv", "VERILATOR_ROOT"]), &mut log)?;
            Ok(Tools { verilator, gxx, root: PathBuf::from(root.trim()) })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The optimization level of the models' own code: `$EMU_VERILATOR_OPT` (`-O0` to `-O3`, `-Os`),
/// else `-O2`. A large NF's model takes g++ minutes at `-O2` and seconds at `-O0` (the
/// memcached cache's largest file: 40 s, 20 s at `-O1`, 7 s at `-O0`), for a slower
/// simulation: the tests, which run thousands of frames, not millions, build at `-O0`
/// (scripts/test.sh). Verilator's runtime library is always `-O2`: it is built once.
pub fn model_opt() -> Result<String, String> {
    match std::env::var("EMU_VERILATOR_OPT") {
        Err(_) => Ok("-O2".into()),
        Ok(o) if ["-O0", "-O1", "-O2", "-O3", "-Os"].contains(&o.as_str()) => Ok(o),
        Ok(o) => Err(format!("EMU_VERILATOR_OPT={o}: give one of -O0, -O1, -O2, -O3, -Os (g++'s levels)")),
    }
}

/// The flags of every translation unit: [`CXX_FLAGS`], `opt`, Verilator's includes and its
/// `VM_` defines.
fn cxx_flags(tools: &Tools, trace: bool, opt: &str) -> Vec<String> {
    let include = tools.root.join("include");
    let t = trace as u8;
    let mut flags: Vec<String> = CXX_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.push(opt.to_string());
    flags.extend([
        format!("-I{}", include.display()),
        format!("-I{}", include.join("vltstd").display()),
        "-DVM_COVERAGE=0".into(),
        "-DVM_SC=0".into(),
        format!("-DVM_TRACE={t}"),
        "-DVM_TRACE_FST=0".into(),
        format!("-DVM_TRACE_VCD={t}"),
    ]);
    flags
}

/// Verilator's runtime library (`verilated.cpp` and its kin), compiled once for every model
/// built with the same tools and flags: its objects, in `root/runtime-<hash>`.
fn runtime(root: &Path, tools: &Tools, trace: bool) -> Result<(PathBuf, Vec<PathBuf>), String> {
    let mut units = vec!["verilated", "verilated_threads"];
    if trace {
        units.push("verilated_vcd_c");
    }
    let flags = cxx_flags(tools, trace, "-O2");
    let mut h = Fnv64::default();
    h.part(b"emu-sim verilator runtime 1");
    h.part(tools.verilator.as_bytes());
    h.part(tools.gxx.as_bytes());
    h.part(flags.join(" ").as_bytes());
    h.part(units.join(" ").as_bytes());
    let name = format!("runtime-{:016x}", h.finish());
    let (dir, _) = cached_dir(root, &name, "runtime.txt", |dir, log| {
        let include = tools.root.join("include");
        let cmds = units
            .iter()
            .map(|u| {
                let mut cmd = Command::new("g++");
                cmd.current_dir(dir).args(&flags).arg("-c").arg(include.join(format!("{u}.cpp")));
                cmd.arg("-o").arg(format!("{u}.o"));
                cmd
            })
            .collect();
        run_all(cmds, log)?;
        std::fs::write(dir.join("runtime.txt"), format!("{}\n{}\n", tools.verilator, units.join(" ")))
            .map_err(|e| e.to_string())
    })
    .map_err(|e| format!("cannot build Verilator's runtime: {e}"))?;
    let objects = units.iter().map(|u| dir.join(format!("{u}.o"))).collect();
    Ok((dir, objects))
}

/// What a model is built from: the files, the flags and the hash of it all.
struct Recipe {
    top: String,
    data_bits: u32,
    trace: bool,
    /// g++'s optimization level for the model ([`model_opt`]).
    opt: String,
    /// (file name, Verilog), one per module.
    files: Vec<(String, String)>,
    verilator_args: Vec<String>,
    shim_defines: Vec<String>,
    hash: String,
}

impl Recipe {
    fn new(design: &Design, trace: bool, tools: &Tools, runtime: &Path) -> Result<Recipe, String> {
        let top = design.top_name();
        let data_bits = 8 * design.config.bus_bytes as u32;
        let opt = model_opt()?;
        let mut files = vec![];
        for m in rtl::modules(design)? {
            files.push((format!("{}.v", m.name), m.to_string()));
        }
        let mut verilator_args: Vec<String> = VERILATOR_FLAGS.iter().map(|s| s.to_string()).collect();
        if trace {
            verilator_args.push("--trace".into());
        }
        verilator_args.extend(["--top-module".to_string(), top.clone(), "--Mdir".into(), "obj".into()]);
        let shim_defines = vec![
            format!("-DEMU_TOP_HEADER=\"V{top}.h\""),
            format!("-DEMU_TOP_CLASS=V{top}"),
            format!("-DEMU_DATA_BITS={data_bits}"),
            format!("-DEMU_TRACE={}", trace as u8),
            format!("-DEMU_DEBUG={}", design.config.debug as u8),
        ];
        let mut h = Fnv64::default();
        h.part(b"emu-sim verilator model 1");
        h.part(SHIM.as_bytes());
        h.part(tools.verilator.as_bytes());
        h.part(tools.gxx.as_bytes());
        // The runtime's name is the hash of its own tools and flags.
        h.part(runtime.file_name().map_or(&b""[..], |n| n.as_encoded_bytes()));
        for flags in [&verilator_args[..], &shim_defines[..], &cxx_flags(tools, trace, &opt)[..]] {
            h.part(flags.join(" ").as_bytes());
        }
        for flags in [LINK_FLAGS, LINK_LIBS] {
            h.part(flags.join(" ").as_bytes());
        }
        for (name, text) in &files {
            h.part(name.as_bytes());
            h.part(text.as_bytes());
        }
        let hash = format!("{:016x}", h.finish());
        Ok(Recipe { top, data_bits, trace, opt, files, verilator_args, shim_defines, hash })
    }

    /// Builds the library in `dir` (new and empty).
    fn build(&self, dir: &Path, tools: &Tools, runtime: &[PathBuf], log: &mut String) -> Result<(), String> {
        let io = |what: &str, e: std::io::Error| format!("{what} in {}: {e}", dir.display());
        std::fs::create_dir_all(dir.join("rtl")).map_err(|e| io("cannot create rtl/", e))?;
        let mut verilator = Command::new("verilator");
        verilator.current_dir(dir).args(&self.verilator_args);
        for (name, text) in &self.files {
            std::fs::write(dir.join("rtl").join(name), text).map_err(|e| io("cannot write the Verilog", e))?;
            verilator.arg(Path::new("rtl").join(name));
        }
        run(&mut verilator, log)?;

        std::fs::write(dir.join("shim.cpp"), SHIM).map_err(|e| io("cannot write the shim", e))?;
        let mut sources: Vec<PathBuf> = std::fs::read_dir(dir.join("obj"))
            .map_err(|e| io("cannot list obj/", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
            .collect();
        // The largest first, so the two compilers finish together.
        sources.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
        sources.push(dir.join("shim.cpp"));
        let flags = cxx_flags(tools, self.trace, &self.opt);
        let mut cmds = vec![];
        let mut objects = vec![];
        for (i, src) in sources.iter().enumerate() {
            let out = dir.join(format!("{i:02}.o"));
            let mut cmd = Command::new("g++");
            cmd.current_dir(dir).args(&flags).arg(format!("-I{}", dir.join("obj").display()));
            if src.file_name().is_some_and(|n| n == "shim.cpp") {
                cmd.args(&self.shim_defines);
            }
            cmd.arg("-c").arg(src).arg("-o").arg(&out);
            cmds.push(cmd);
            objects.push(out);
        }
        run_all(cmds, log)?;
        let mut link = Command::new("g++");
        link.current_dir(dir).args(LINK_FLAGS).arg("-o").arg(dir.join(LIB)).args(&objects).args(runtime);
        run(link.args(LINK_LIBS), log)?;
        // The objects are in the library now.
        for o in &objects {
            let _ = std::fs::remove_file(o);
        }
        std::fs::write(
            dir.join("model.txt"),
            format!("top {}\ndata_bits {}\ntrace {}\nhash {}\n", self.top, self.data_bits, self.trace, self.hash),
        )
        .map_err(|e| io("cannot write model.txt", e))
    }
}

impl VerilatorModel {
    /// The Verilator model of `design`, from the cache ([`cache_root`]) or built into it.
    /// With `vcd`, the model is built with `--trace` and writes every signal to that file.
    pub fn build(design: &Design, vcd: Option<PathBuf>) -> Result<(VerilatorModel, BuildInfo), String> {
        Self::build_in(design, vcd, &cache_root())
    }

    /// [`VerilatorModel::build`] with models cached under `root` instead.
    pub fn build_in(design: &Design, vcd: Option<PathBuf>, root: &Path) -> Result<(VerilatorModel, BuildInfo), String> {
        let start = Instant::now();
        let tools = tools()?;
        let trace = vcd.is_some();
        let (runtime_dir, runtime_objects) = runtime(root, tools, trace)?;
        let recipe = Recipe::new(design, trace, tools, &runtime_dir)?;
        let (dir, cached) =
            cached_dir(root, &recipe.hash, LIB, |dir, log| recipe.build(dir, tools, &runtime_objects, log))
                .map_err(|e| format!("cannot build the Verilator model of {}: {e}", recipe.top))?;
        let api = Api::load(&dir.join(LIB))?;
        if api.data_bits != recipe.data_bits {
            return Err(format!("{} is {} bits wide, not {}", dir.display(), api.data_bits, recipe.data_bits));
        }
        let mut model = VerilatorModel::instantiate(Arc::new(api), design.config.bus_bytes, dir.clone());
        if let Some(path) = vcd {
            model.trace(&path)?;
        }
        Ok((model, BuildInfo { cached, dir, seconds: start.elapsed().as_secs_f64() }))
    }
    fn instantiate(api: Arc<Api>, bus_bytes: usize, dir: PathBuf) -> VerilatorModel {
        // SAFETY: a function of the loaded shim, which stays loaded in `api`.
        let model = unsafe { (api.new)() };
        VerilatorModel {
            api,
            model,
            bus_bytes,
            inputs: RawInputs::default(),
            time: 0,
            tracing: false,
            paused: false,
            tdata_fault: None,
            dir,
            debug_in: RawDebugIn::default(),
        }
    }

    /// Another instance of the same model, just constructed (not reset, not tracing).
    pub fn another(&self) -> VerilatorModel {
        VerilatorModel::instantiate(self.api.clone(), self.bus_bytes, self.dir.clone())
    }

    /// Starts writing a VCD of every signal to `path` (the model must have been built for
    /// tracing: [`VerilatorModel::build`] with a `vcd`).
    pub fn trace(&mut self, path: &Path) -> Result<(), String> {
        if !self.api.traced {
            return Err("this model was built without --trace: build it with a vcd path".into());
        }
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("{} has a NUL byte", path.display()))?;
        // SAFETY: `c` outlives the call; the model is live.
        if unsafe { (self.api.trace_open)(self.model, c.as_ptr()) } != 0 {
            return Err(format!("cannot open the VCD {}", path.display()));
        }
        self.tracing = true;
        Ok(())
    }

    /// Flushes and closes the VCD, if one is open (dropping the model does too).
    pub fn close_trace(&mut self) {
        // SAFETY: the model is live.
        unsafe { (self.api.trace_close)(self.model) };
        self.tracing = false;
    }

    /// Fault injection, for tests of the comparison itself: `mask` (byte `i` onto frame byte
    /// `i` of the beat) is XORed into `m_axis_tdata` as read. `None` turns it off.
    pub fn set_tdata_fault(&mut self, mask: Option<Vec<u8>>) {
        self.tdata_fault = mask;
    }

    /// The model's directory in the cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes per beat.
    pub fn bus_bytes(&self) -> usize {
        self.bus_bytes
    }

    /// Whether the model has the debug unit's register port (built with `HwConfig::debug`).
    pub fn has_debug(&self) -> bool {
        self.api.debug
    }

    /// Presents `req` on the debug unit's port at the next clock edge (one cycle, alongside
    /// the stream's inputs); its response shows in [`debug_response`](Self::debug_response)
    /// after that edge.
    pub fn debug_request(&mut self, req: DebugRequest) {
        self.debug_in = match req {
            DebugRequest::Read(addr) => RawDebugIn { addr, wdata: 0, valid: 1, write: 0 },
            DebugRequest::Write(addr, wdata) => RawDebugIn { addr, wdata, valid: 1, write: 1 },
        };
    }

    /// The debug unit's response this cycle: the word read (0 after a write).
    pub fn debug_response(&self) -> Option<u32> {
        let mut o = RawDebugOut::default();
        // SAFETY: the model is live; `o` is a valid `EmuDebugOut`.
        unsafe { (self.api.get_debug)(self.model, &mut o) };
        (o.valid & 1 != 0).then_some(o.rdata)
    }

    /// The raw outputs of the current cycle.
    pub fn raw_outputs(&self) -> RawOutputs {
        let mut o = RawOutputs::default();
        // SAFETY: the model is live; `o` is a valid `EmuOutputs`.
        unsafe { (self.api.get_outputs)(self.model, &mut o) };
        o
    }

    fn dump(&mut self) {
        if self.tracing && !self.paused {
            // SAFETY: the model is live.
            unsafe { (self.api.trace_dump)(self.model, self.time) };
        }
    }

    /// One cycle: the inputs set with the clock low, evaluated, the clock raised, evaluated.
    fn edge(&mut self) {
        // SAFETY: the model is live; `self.inputs` is a valid `EmuInputs`.
        unsafe {
            (self.api.set_clock)(self.model, 0);
            (self.api.set_inputs)(self.model, &self.inputs);
            (self.api.set_debug)(self.model, &self.debug_in);
            (self.api.eval)(self.model);
        }
        self.debug_in = RawDebugIn::default();
        self.dump();
        self.time += 5;
        // SAFETY: as above.
        unsafe {
            (self.api.set_clock)(self.model, 1);
            (self.api.eval)(self.model);
        }
        self.dump();
        self.time += 5;
    }

    fn keep_mask(&self) -> u64 {
        if self.bus_bytes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bus_bytes) - 1
        }
    }
}

/// Bytes (frame byte `i` at bits `[8i+7:8i]`) as 32-bit words, least significant first.
fn bytes_to_words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut w = [0u32; N];
    for (i, &b) in bytes.iter().enumerate().take(4 * N) {
        w[i / 4] |= (b as u32) << (8 * (i % 4));
    }
    w
}

fn words_to_bytes(words: &[u32], n: usize) -> Vec<u8> {
    (0..n).map(|i| (words[i / 4] >> (8 * (i % 4))) as u8).collect()
}

fn u128_to_words(v: u128) -> [u32; 4] {
    [v as u32, (v >> 32) as u32, (v >> 64) as u32, (v >> 96) as u32]
}

fn words_to_u128(w: &[u32; 4]) -> u128 {
    w.iter().rev().fold(0u128, |acc, &x| (acc << 32) | x as u128)
}

impl Clocked for VerilatorModel {
    fn set_recording(&mut self, on: bool) {
        self.paused = !on;
    }

    fn outputs(&self) -> Outputs {
        let o = self.raw_outputs();
        let m_axis = (o.m_axis_tvalid & 1 != 0).then(|| {
            let mut tdata = words_to_bytes(&o.m_axis_tdata, self.bus_bytes);
            if let Some(mask) = &self.tdata_fault {
                for (b, m) in tdata.iter_mut().zip(mask) {
                    *b ^= m;
                }
            }
            Beat {
                tdata,
                tkeep: o.m_axis_tkeep & self.keep_mask(),
                tuser: words_to_u128(&o.m_axis_tuser),
                tlast: o.m_axis_tlast & 1 != 0,
            }
        });
        let drop = (o.stat_drop_valid & 1 != 0).then(|| DropReason::from_code(o.stat_drop_reason)).flatten();
        Outputs { s_axis_tready: o.s_axis_tready & 1 != 0, m_axis, drop }
    }

    fn clock(&mut self, inputs: &Inputs) {
        let beat = inputs.s_axis.as_ref();
        self.inputs = RawInputs {
            s_axis_tdata: beat.map_or([0; 8], |b| bytes_to_words(&b.tdata[..b.tdata.len().min(self.bus_bytes)])),
            s_axis_tuser: beat.map_or([0; 4], |b| u128_to_words(b.tuser)),
            s_axis_tkeep: beat.map_or(0, |b| b.tkeep & self.keep_mask()),
            axis_resetn: 1,
            s_axis_tvalid: beat.is_some() as u8,
            s_axis_tlast: beat.is_some_and(|b| b.tlast) as u8,
            m_axis_tready: inputs.m_axis_tready as u8,
        };
        self.edge();
    }

    fn reset(&mut self) {
        self.inputs = RawInputs::default();
        self.edge();
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn fnv1a_64_has_its_published_values() {
        let hash = |b: &[u8]| {
            let mut h = Fnv64::default();
            h.write(b);
            h.finish()
        };
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn beats_and_words_round_trip() {
        let bytes: Vec<u8> = (1..=32).collect();
        let w: [u32; 8] = bytes_to_words(&bytes);
        assert_eq!(w[0], 0x0403_0201);
        assert_eq!(w[7], 0x201f_1e1d);
        assert_eq!(words_to_bytes(&w, 32), bytes);
        let v = 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10u128;
        assert_eq!(words_to_u128(&u128_to_words(v)), v);
        assert_eq!(u128_to_words(v)[0], 0x0d0e_0f10);
    }
}
