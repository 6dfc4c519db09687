//! `emu netfpga`: the SUME project it writes, its Vivado script run by `tclsh` with Vivado's
//! commands stubbed (procs that record their calls and check the files they are given), the
//! OPL wrapper linted by Verilator, and the run through a stand-in `vivado` on the PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn emu(args: &[&str], path: &str, envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_emu"));
    cmd.args(args).env("PATH", path).env_remove("SUME_FOLDER");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The system's PATH without any directory holding a `vivado`.
fn path_without_vivado() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).filter(|d| !d.join("vivado").exists()).collect();
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

fn project(dir: &Path) -> Output {
    let out = emu(&["netfpga", "learning-switch", "-o", dir.to_str().unwrap()], &path_without_vivado(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// Vivado's commands as Tcl procs that log each call, one line each, to `$::calls`; the
/// commands that take files fail when a file does not exist.
const STUBS: &str = r#"
set ::calls {}
set ::ips {}
proc record {args} { lappend ::calls $args }
foreach cmd {create_project update_ip_catalog generate_target synth_design opt_design place_design
             phys_opt_design route_design report_timing_summary report_utilization write_checkpoint} {
    proc $cmd {args} "record $cmd {*}\$args"
}
proc current_project {args} { return project }
proc current_fileset {args} { return sources_1 }
proc set_property {args} { record set_property {*}$args }
proc get_files {args} { return [lindex $args end] }
proc get_ips {args} { if {[llength $args]} { return [lindex $args end] } else { return $::ips } }
proc get_property {name obj} { if {$name eq "SLACK"} { return 0.125 } else { return $obj.xci } }
proc get_timing_paths {args} { return path }
proc create_ip {args} {
    record create_ip {*}$args
    lappend ::ips [lindex $args [expr {[lsearch $args -module_name] + 1}]]
}
proc must_exist {cmd files} {
    foreach f $files { if {![file exists $f]} { error "$cmd: no such file $f" } }
}
proc read_verilog {args} { set files [lindex $args end]; must_exist read_verilog $files; record read_verilog {*}$files }
proc read_xdc {f} { must_exist read_xdc [list $f]; record read_xdc $f }
proc write_bitstream {args} { record write_bitstream {*}$args }
"#;

/// A stand-in NetFPGA-SUME-live checkout with the files the script needs; the reference
/// scripts it sources are empty.
fn fake_sume(root: &Path) {
    let hw = root.join("projects/reference_switch/hw");
    for f in [
        "hdl/top.v",
        "hdl/axi_clocking.v",
        "tcl/control_sub.tcl",
        "tcl/reference_switch_defines.tcl",
        "create_ip/nf_10ge_interface.tcl",
        "create_ip/nf_10ge_interface_shared.tcl",
        "create_ip/id_rom16x32.coe",
        "constraints/nf_sume_10g.xdc",
    ] {
        std::fs::create_dir_all(hw.join(f).parent().unwrap()).unwrap();
        std::fs::write(hw.join(f), "").unwrap();
    }
    let lib = root.join("lib/hw/std/constraints");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("generic_bit.xdc"), "").unwrap();
}

/// Runs the project's Tcl under tclsh with the stubs; returns the output and the calls.
fn run_tcl(dir: &Path, sume: Option<&Path>) -> (Output, Vec<String>) {
    let calls = dir.join("calls.txt");
    let driver = dir.join("driver.tcl");
    std::fs::write(
        &driver,
        format!(
            "{STUBS}\nsource {}\nset f [open {} w]\nforeach c $::calls {{ puts $f $c }}\nclose $f\n",
            dir.join("emu_sume.tcl").display(),
            calls.display()
        ),
    )
    .unwrap();
    let mut cmd = Command::new("tclsh");
    cmd.arg(&driver).env_remove("SUME_FOLDER");
    if let Some(s) = sume {
        cmd.env("SUME_FOLDER", s);
    }
    let out = cmd.output().expect("tclsh (Debian's tcl, installed by scripts/setup.sh)");
    let lines = std::fs::read_to_string(&calls).unwrap_or_default().lines().map(str::to_string).collect();
    (out, lines)
}

#[test]
fn the_vivado_script_runs_the_whole_flow() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ls");
    let out = project(&dir);
    assert!(
        text(&out).contains(&format!(
            "Vivado was not found on the PATH: the project is ready in {d}; where Vivado is installed, run \
             `SUME_FOLDER=/path/to/NetFPGA-SUME-live make -C {d}`",
            d = dir.display()
        )),
        "{}",
        text(&out)
    );
    let sume = tmp.path().join("NetFPGA-SUME-live");
    fake_sume(&sume);
    let (run, calls) = run_tcl(&dir, Some(&sume));
    assert!(run.status.success(), "{}", text(&run));
    let at = |prefix: &str| {
        calls
            .iter()
            .position(|c| c.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in:\n{}", calls.join("\n")))
    };
    let create = &calls[at("create_project")];
    assert!(create.contains("-part xc7vx690tffg1761-3"), "{create}");
    for ip in ["input_arbiter_ip", "output_queues_ip"] {
        assert!(calls.iter().any(|c| c.starts_with("create_ip") && c.contains(&format!("-module_name {ip}"))), "{ip}");
    }
    let sources = &calls[at("read_verilog")];
    for f in [
        "/hdl/top.v",
        "/hdl/nf_datapath.v",
        "/hdl/emu_output_port_lookup.v",
        "/verilog/emu_learning_switch.v",
        "/verilog/emu_learning_switch_mac_table.v",
    ] {
        assert!(sources.contains(f), "{f} not read: {sources}");
    }
    let xdcs: Vec<&String> = calls.iter().filter(|c| c.starts_with("read_xdc")).collect();
    assert!(xdcs.iter().any(|c| c.ends_with("constraints/emu_sume.xdc")), "{xdcs:?}");
    assert!(xdcs.iter().any(|c| c.ends_with("nf_sume_10g.xdc")), "{xdcs:?}");
    assert!(calls[at("synth_design")].contains("-top top -part xc7vx690tffg1761-3"));
    // The flow's steps, in order.
    let order: Vec<usize> = [
        "read_xdc",
        "synth_design",
        "opt_design",
        "place_design",
        "route_design",
        "report_timing_summary",
        "report_utilization",
        "write_bitstream",
    ]
    .iter()
    .map(|s| at(s))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "steps out of order: {order:?}\n{}", calls.join("\n"));
    assert!(calls[at("write_bitstream")].ends_with("emu_sume_learning_switch.bit"), "{}", calls[at("write_bitstream")]);
    let summary = std::fs::read_to_string(dir.join("reports/summary.txt")).unwrap();
    assert_eq!(emu_fpga::vivado::summary(&summary), (Some(0.125), Some(0.125)));
}

#[test]
fn the_script_says_what_to_do_without_a_sume_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ls");
    project(&dir);
    let (run, calls) = run_tcl(&dir, None);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(
        text(&run).contains("SUME_FOLDER is not set: export SUME_FOLDER=/path/to/NetFPGA-SUME-live"),
        "{}",
        text(&run)
    );
    assert!(calls.is_empty(), "nothing runs without the checkout: {calls:?}");
    // A folder that is not a checkout: the first missing file is named.
    let (run, _) = run_tcl(&dir, Some(tmp.path()));
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run).contains("must be a NetFPGA-SUME-live checkout"), "{}", text(&run));
    // make says it too, before starting Vivado.
    let make = Command::new("make").arg("-C").arg(&dir).env_remove("SUME_FOLDER").output().unwrap();
    assert!(!make.status.success());
    assert!(text(&make).contains("SUME_FOLDER is not set"), "{}", text(&make));
}

#[test]
fn the_opl_wrapper_and_the_nf_lint_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ls");
    project(&dir);
    let mut source = String::new();
    for entry in std::fs::read_dir(dir.join("verilog")).unwrap() {
        source.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    source.push_str(&std::fs::read_to_string(dir.join("hdl/emu_output_port_lookup.v")).unwrap());
    emu_hls::hw::tools::verilator_lint_design(&source, "emu_output_port_lookup", true)
        .unwrap_or_else(|e| panic!("{e}"));
    for entry in std::fs::read_dir(dir.join("sim")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "v") {
            source.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    emu_hls::hw::tools::verilator_lint_design(&source, "emu_sume_sim", true).unwrap_or_else(|e| panic!("{e}"));
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("| 0x014 | PKTIN |") && readme.contains("DROP_SAME_PORT"), "{readme}");
}

#[test]
fn with_vivado_on_the_path_it_builds_and_reports_timing() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A stand-in for Vivado: what emu_sume.tcl leaves behind, with a failing slack.
    let vivado = bin.join("vivado");
    std::fs::write(
        &vivado,
        "#!/bin/sh\nmkdir -p reports\nprintf 'wns -0.250\\nwhs 0.040\\n' > reports/summary.txt\n\
         printf '| Slice LUTs | 5000 | 0 | 433200 | 1.15 |\\n| Slice Registers | 6000 | 0 | 866400 | 0.69 |\\n' > reports/utilization.rpt\n\
         touch emu_sume_learning_switch.bit\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&vivado, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), path_without_vivado());
    let dir = tmp.path().join("ls");
    let d = dir.to_str().unwrap();

    let out = emu(&["netfpga", "learning-switch", "-o", d], &path, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("SUME_FOLDER is not set"), "{}", text(&out));

    let out = emu(&["netfpga", "learning-switch", "-o", d], &path, &[("SUME_FOLDER", "/nonexistent")]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "timing not met is exit status 1: {t}");
    assert!(t.contains("WNS -0.250 ns (NOT met)"), "{t}");
    assert!(t.contains("Slice LUTs") && t.contains("5000 of 433200"), "{t}");
    assert!(dir.join("emu_sume_learning_switch.bit").exists());
}

#[test]
fn help_has_an_example_and_a_bad_board_says_what_to_do() {
    let path = path_without_vivado();
    let help = emu(&["netfpga", "--help"], &path, &[]);
    assert!(text(&help).contains("emu netfpga learning-switch -o sume/learning-switch"), "{}", text(&help));
    let tmp = tempfile::tempdir().unwrap();
    let bad = emu(&["netfpga", "learning-switch", "--board", "nexys", "-o", tmp.path().to_str().unwrap()], &path, &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad).contains("unknown board `nexys`") && text(&bad).contains("give --board sume"), "{}", text(&bad));
    let no_dir = emu(&["netfpga", "learning-switch"], &path, &[]);
    assert!(text(&no_dir).contains("-o DIR is required"), "{}", text(&no_dir));
}

/// Stand-ins for the reference IP `nf_datapath` instantiates, from its instances: every port an
/// input of the width of what it is connected to (the address `addr_bits` wide, as top.v
/// passes it), so that only our side can make iverilog pad or cut a connection.
fn reference_ip_stubs(datapath: &str, addr_bits: u32) -> String {
    let width = |signal: &str| -> String {
        let decl = datapath
            .lines()
            .map(str::trim)
            .find(|l| {
                (l.starts_with("input") || l.starts_with("output") || l.starts_with("wire"))
                    && l.trim_end_matches([',', ';']).ends_with(&format!(" {signal}"))
            })
            .unwrap_or_else(|| panic!("no declaration of {signal}"));
        match (decl.find('['), decl.find(']')) {
            (Some(a), Some(b)) if decl[a..b].contains("C_S_AXI_ADDR_WIDTH") => format!("[{}:0] ", addr_bits - 1),
            (Some(a), Some(b)) => decl[a..=b].to_string() + " ",
            _ => String::new(),
        }
    };
    let mut stubs = String::new();
    for module in ["input_arbiter_ip", "output_queues_ip"] {
        let start = datapath.find(&format!("    {module} ")).unwrap_or_else(|| panic!("no {module} in nf_datapath"));
        let body = &datapath[start..start + datapath[start..].find(");").unwrap()];
        let ports: Vec<String> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix('.'))
            .map(|l| {
                let (port, rest) = l.split_once('(').unwrap();
                let signal = rest.split(')').next().unwrap();
                format!("    input wire {}{port}", width(signal))
            })
            .collect();
        stubs.push_str(&format!("module {module} (\n{}\n);\nendmodule\n", ports.join(",\n")));
    }
    stubs
}

/// The generated `nf_datapath` as the reference top.v instantiates it, with
/// `C_S_AXI_ADDR_WIDTH` 12, elaborates under iverilog -Wall with no connection padded or cut
/// (the reference's six width-padding warnings): the address ports take the parameter and the
/// OPL decodes their 12 bits.
#[test]
fn nf_datapath_honours_the_reference_address_width() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ls");
    project(&dir);
    let datapath = std::fs::read_to_string(dir.join("hdl/nf_datapath.v")).unwrap();
    assert!(datapath.contains("input wire [C_S_AXI_ADDR_WIDTH-1:0] S1_AXI_AWADDR,"), "{datapath}");
    std::fs::write(tmp.path().join("stubs.v"), reference_ip_stubs(&datapath, 12)).unwrap();
    let mut files = vec![tmp.path().join("stubs.v"), dir.join("hdl/nf_datapath.v"), dir.join("hdl/emu_output_port_lookup.v")];
    for entry in std::fs::read_dir(dir.join("verilog")).unwrap() {
        files.push(entry.unwrap().path());
    }
    let run = |width: u32| {
        Command::new("iverilog")
            .args(["-g2012", "-Wall", "-s", "nf_datapath", "-o"])
            .arg(tmp.path().join("dp.vvp"))
            .arg(format!("-Pnf_datapath.C_S_AXI_ADDR_WIDTH={width}"))
            .args(&files)
            .output()
            .expect("iverilog (scripts/setup.sh installs it)")
    };
    let out = run(12);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    let widths = |said: &str| -> Vec<String> {
        let kinds = ["Padding", "expects", "truncated", "implicit", "found no sensitivities"];
        said.lines().filter(|l| kinds.iter().any(|k| l.contains(k))).map(str::to_string).collect()
    };
    assert!(widths(&said).is_empty(), "{said}");
    // At the default 32 bits the stand-ins (12 bits, as above) are what iverilog pads: the
    // parameter reaches the ports.
    let out = run(32);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let padded = widths(&said);
    let stubs = |l: &String| l.contains("of input_arbiter_ip") || l.contains("of output_queues_ip");
    assert!(padded.len() == 4 && padded.iter().all(stubs), "{said}");
}
