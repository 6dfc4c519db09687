//! Tests of the front end: the project's NFs, the module-level rules, the typed AST, and every
//! example of docs/hls-subset.md (accepted, or rejected with exactly the messages shown).

use super::ast::*;
use super::*;

fn module(src: &str) -> syn::ItemMod {
    syn::parse_str(src).unwrap_or_else(|e| panic!("{e}: {src}"))
}

/// The NF module of a crate's source file.
fn nf_of(file_src: &str) -> syn::ItemMod {
    let file: syn::File = syn::parse_str(file_src).unwrap();
    find_nf_module(&file).expect("an #[emu::nf] module").clone()
}

fn show(errors: &[Error]) -> String {
    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

fn messages(src: &str) -> Vec<String> {
    match check_module(&module(src), &Options { window: 64 }) {
        Ok(_) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.message).collect(),
    }
}

#[test]
fn the_learning_switch_is_in_the_subset() {
    let m = nf_of(include_str!("../../../netfuncs/learning-switch/src/lib.rs"));
    let nf = check_module(&m, &Options { window: 64 }).unwrap_or_else(|e| panic!("{}", show(&e)));
    assert_eq!(nf.name, "learning_switch");
    assert_eq!(nf.state.name, "LearningSwitch");
    let table = &nf.state.fields[0];
    assert_eq!(table.name, "mac_table");
    assert_eq!(
        table.kind,
        FieldKind::Element(Element { kind: ElementKind::Cam, types: vec![Ty::Mac, Ty::uint(8)], sizes: vec![16] })
    );
    assert_eq!(
        nf.state.fields[1].kind,
        FieldKind::Element(Element { kind: ElementKind::Counter, types: vec![], sizes: vec![64] })
    );
    assert_eq!(nf.consts.iter().map(|c| (c.name.as_str(), c.value)).collect::<Vec<_>>(), [("MAC_TABLE_SIZE", 16)]);
    assert_eq!(nf.fns.len(), 1);
    let process = &nf.fns[0];
    assert_eq!(process.ret, Ty::Action);
    let locals: Vec<_> = process.locals.iter().map(|l| (l.name.as_str(), l.ty.to_string())).collect();
    assert_eq!(
        locals,
        [
            ("pkt", "&mut Packet".to_string()),
            ("meta", "&Meta".to_string()),
            ("eth", "ethernet::Header<&[u8]>".to_string()),
            ("src", "Mac".to_string()),
            ("dst", "Mac".to_string()),
            ("port", "u8".to_string()),
            ("port", "u8".to_string()),
        ]
    );
    // `let eth = pkt.ethernet();` is a view of the ethernet header at byte 0.
    let Stmt::Let { init: Some(init), .. } = &process.body.stmts[0] else { panic!() };
    let ExprKind::Lib { op: LibOp::View { header: "ethernet", mutable: false }, args } = &init.kind else {
        panic!("{init:?}")
    };
    assert!(matches!(args[1].kind, ExprKind::Int(0)));
    // The final `match` on the CAM lookup, with a guard.
    let tail = process.body.tail.as_ref().unwrap();
    let ExprKind::Match { scrutinee, arms } = &tail.kind else { panic!() };
    assert_eq!(scrutinee.ty, Ty::Option(Box::new(Ty::uint(8))));
    let ExprKind::Lib { op: LibOp::State { field, method: "get", writes: false, .. }, .. } = &scrutinee.kind else {
        panic!()
    };
    assert_eq!(field, "mac_table");
    assert_eq!(arms.len(), 3);
    assert!(arms[0].guard.is_some());
}

#[test]
fn icmp_echo_is_in_the_subset() {
    let m = nf_of(include_str!("../../../netfuncs/icmp-echo/src/lib.rs"));
    let nf = check_module(&m, &Options { window: 128 }).unwrap_or_else(|e| panic!("{}", show(&e)));
    assert_eq!(nf.state.name, "IcmpEcho");
    let names: Vec<_> = nf.fns.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["process", "arp", "ipv4"]);
    assert_eq!(nf.cpu_only, ["new"], "the constructor runs on the CPU only");
    assert_eq!(nf.state.fields[0].kind, FieldKind::Value(Ty::Ipv4Addr));
    // `process` calls `arp` and `ipv4` by index.
    let ExprKind::Match { arms, .. } = &nf.fns[0].body.tail.as_ref().unwrap().kind else { panic!() };
    assert!(matches!(arms[0].pat.kind, PatKind::Int(0x0806)));
    assert!(matches!(arms[0].body.kind, ExprKind::Call { func: 1, .. }));
    assert!(matches!(arms[1].body.kind, ExprKind::Call { func: 2, .. }));
    // The literals of `ipv4` got their widths from where they are used.
    let ipv4 = &nf.fns[2];
    let ty_of = |name: &str| ipv4.locals.iter().find(|l| l.name == name).unwrap().ty.clone();
    assert_eq!(ty_of("l4"), Ty::USIZE, "14 + ip.header_len()");
    assert_eq!(ty_of("end"), Ty::USIZE);
    assert_eq!(ty_of("old_word"), Ty::uint(16), "(ttl as u16) << 8 | 1");
    assert_eq!(ty_of("c"), Ty::uint(16));
    assert_eq!(ty_of("icmp_sum"), Ty::uint(16));
}

#[test]
fn a_file_checks_like_a_module() {
    let file: syn::File = syn::parse_str(
        "use emu::prelude::*;
         pub struct Hub;
         impl NetworkFunction for Hub {
             fn process(&mut self, _pkt: &mut Packet, _meta: &Meta) -> Action { Action::Flood }
         }",
    )
    .unwrap();
    let nf = check_file(&file, "hub", &Options { window: 64 }).unwrap();
    assert_eq!((nf.name.as_str(), nf.state.name.as_str()), ("hub", "Hub"));
    assert!(nf.state.fields.is_empty());
}

#[test]
fn module_level_rules() {
    assert_eq!(
        messages("mod m { pub struct S; }"),
        ["this NF module has no `impl NetworkFunction for …`; the hardware is that impl's `process`: write \
          `impl NetworkFunction for MyNf { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { … } }`"]
    );
    assert_eq!(
        messages("mod m { impl NetworkFunction for S { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { Action::Flood } } }"),
        ["the state struct `S` is not declared in this NF module; declare it here so the compiler sees its fields"]
    );
    let no_content: syn::ItemMod = syn::parse_str("mod m;").unwrap();
    assert_eq!(
        check_module(&no_content, &Options { window: 64 }).unwrap_err()[0].message,
        "the NF module must be written inline (`mod my_nf { … }`), so the compiler sees its items"
    );
    let two = messages(
        "mod m { pub struct S; pub struct T;
           impl NetworkFunction for S { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { Action::Flood } }
           impl NetworkFunction for T { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { Action::Flood } } }",
    );
    assert_eq!(two.len(), 1);
    assert!(two[0].starts_with("a second `impl NetworkFunction` in one NF module"));
    let generic = messages(
        "mod m { pub struct S<T> { x: T }
           impl NetworkFunction for S { fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action { Action::Flood } } }",
    );
    assert!(generic[0].starts_with("the state struct is generic"), "{generic:?}");
}

/// Errors are collected, not stopped at: one per offending construct, in source order.
#[test]
fn every_error_is_reported() {
    let found = messages(
        "mod m {
            use emu::prelude::*;
            pub struct S { history: Vec<Mac>, scale: f32, t: Cam<Mac, Port, 4> }
            impl NetworkFunction for S {
                fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                    let b = Box::new(meta.in_port);
                    println!(\"{}\", meta.in_port);
                    let n = 3;
                    while pkt.len() > 0 {}
                    Action::Flood
                }
            }
        }",
    );
    let starts: Vec<&str> = found.iter().map(|m| m.split([';', ':']).next().unwrap()).collect();
    assert_eq!(
        starts,
        [
            "`Vec` is a growable, heap-allocated array, which hardware cannot have",
            "floating point is not in the subset (there is no floating-point unit in the circuit)",
            "heap allocation (`Box",
            "string formatting (`println!`) has no hardware equivalent",
            "the width of `3` cannot be known",
            "a `while` loop runs until its condition changes, so its trip count is not known when the circuit is built",
        ]
    );
}

#[test]
fn errors_carry_positions() {
    let src = "mod m {
    use emu::prelude::*;
    pub struct S;
    impl NetworkFunction for S {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            let x = 0.5;
            Action::Flood
        }
    }
}";
    let errors = check_module(&module(src), &Options { window: 64 }).unwrap_err();
    assert_eq!(errors[0].line_column(), (6, 20));
    assert!(errors[0].to_string().starts_with("6:21: floating point"));
}

#[test]
fn helpers_constants_and_enums_are_typed() {
    let src = "mod m {
        use emu::prelude::*;
        const LIMIT: u16 = 1000 + 24;
        const HOME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
        enum Class { Small, Big = 4 }
        pub struct S { seen: Register<u16>, home: Ipv4Addr }
        impl S {
            fn class(len: u16) -> Class { if len > LIMIT { Class::Big } else { Class::Small } }
            fn bump(&mut self) -> u16 { let n = self.seen.get() + 1; self.seen.set(n); n }
        }
        impl NetworkFunction for S {
            fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                let n = self.bump();
                for i in 0..4 { if pkt.byte(i) == 0 { break; } }
                if self.home == HOME && n > 2 {
                    return Action::Drop(DropReason::Policy);
                }
                if let Some(p) = Some(meta.in_port) { pkt.set_byte(0, p); }
                match Self::class(meta.len) {
                    Class::Big => Action::Drop(DropReason::Oversize),
                    Class::Small => Action::Forward(1),
                }
            }
        }
    }";
    let nf = check_module(&module(src), &Options { window: 64 }).unwrap_or_else(|e| panic!("{}", show(&e)));
    let names: Vec<_> = nf.fns.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["process", "bump", "class"]);
    let consts: Vec<_> = nf.consts.iter().map(|c| (c.name.as_str(), c.value)).collect();
    assert_eq!(consts, [("HOME", 0x0a00_0001), ("LIMIT", 1024)]);
    assert_eq!(nf.enums[0].variants, [("Small".to_string(), 0), ("Big".to_string(), 4)]);
    let i = nf.fns[0].locals.iter().find(|l| l.name == "i").unwrap();
    assert_eq!(i.ty, Ty::USIZE, "the loop counter is a usize because pkt.byte takes one");
    assert_eq!(nf.fns[1].receiver, Some(true));
    assert_eq!(nf.fns[2].receiver, None);
}

// ------------------------------------------------------------------ docs/hls-subset.md

/// The module every example of docs/hls-subset.md is placed in (window 64).
const TEMPLATE: &str = "mod example {
    use emu::prelude::*;
    use emu::wire::{arp, icmpv4, ipv4};

    pub struct Nf {
        table: Cam<Mac, Port, 16>,
        hits: Counter,
        last: Register<u16>,
        ip: Ipv4Addr,
        // STATE
    }

    impl NetworkFunction for Nf {
        fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
            // BODY
        }
    }

    // ITEMS
}";

const DOC: &str = "../docs/hls-subset.md";

/// (snippet, expected messages or `None` for no text block) for each ```rust block.
struct Example {
    code: String,
    line: usize,
    errors: Option<Vec<String>>,
}

fn examples(doc: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let lines: Vec<&str> = doc.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "```rust" {
            let start = i + 1;
            let mut j = start;
            while lines[j].trim() != "```" {
                j += 1;
            }
            let code = lines[start..j].join("\n");
            // A ```text block right after (blank lines allowed) holds the expected errors.
            let mut k = j + 1;
            while k < lines.len() && lines[k].trim().is_empty() {
                k += 1;
            }
            let errors = (k < lines.len() && lines[k].trim() == "```text").then(|| {
                let mut m = k + 1;
                let mut errs: Vec<String> = Vec::new();
                while lines[m].trim() != "```" {
                    match lines[m].strip_prefix("error: ") {
                        Some(e) => errs.push(e.to_string()),
                        None => errs
                            .last_mut()
                            .expect("a text block starts with `error: `")
                            .push_str(&format!(" {}", lines[m].trim())),
                    }
                    m += 1;
                }
                errs
            });
            out.push(Example { code, line: start, errors });
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Places a snippet in [`TEMPLATE`]: lines after `// in the state struct:` go into the state
/// struct, lines after `// in the module:` into the module, the rest into `process`.
fn place(code: &str) -> String {
    let (mut body, mut state, mut items) = (String::new(), String::new(), String::new());
    let mut section = 0;
    for line in code.lines() {
        match line.trim() {
            "// in the state struct:" => section = 1,
            "// in the module:" => section = 2,
            _ => {
                let target = match section {
                    0 => &mut body,
                    1 => &mut state,
                    _ => &mut items,
                };
                target.push_str(line);
                target.push('\n');
            }
        }
    }
    TEMPLATE.replace("// BODY", &body).replace("// STATE", &state).replace("// ITEMS", &items)
}

fn check_example(code: &str) -> Vec<String> {
    let src = place(code);
    let m: syn::ItemMod = syn::parse_str(&src).unwrap_or_else(|e| panic!("example does not parse: {e}\n{src}"));
    match check_module(&m, &Options { window: 64 }) {
        Ok(_) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.message).collect(),
    }
}

/// Wraps a message at about 100 columns for the doc's text blocks.
fn wrap(message: &str) -> String {
    let mut out = String::from("error:");
    let mut col = out.len();
    for word in message.split(' ') {
        if col + 1 + word.len() > 100 && col > 7 {
            out.push_str("\n      ");
            col = 6;
        }
        out.push(' ');
        out.push_str(word);
        col += 1 + word.len();
    }
    out
}

/// Every example of docs/hls-subset.md: accepted when no ```text block follows it, rejected
/// with exactly the messages of the block otherwise. `EMU_BLESS=1` rewrites the blocks from
/// what the checker says (review the diff).
#[test]
fn subset_doc_examples() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC);
    let doc = std::fs::read_to_string(&path).unwrap();
    if std::env::var_os("EMU_BLESS").is_some() {
        let mut out: Vec<String> = Vec::new();
        let lines: Vec<&str> = doc.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            out.push(lines[i].to_string());
            if lines[i].trim() == "```rust" {
                let start = i + 1;
                let mut j = start;
                while lines[j].trim() != "```" {
                    out.push(lines[j].to_string());
                    j += 1;
                }
                out.push(lines[j].to_string());
                let code = lines[start..j].join("\n");
                let mut k = j + 1;
                while k < lines.len() && lines[k].trim().is_empty() {
                    k += 1;
                }
                let had_text = k < lines.len() && lines[k].trim() == "```text";
                if had_text {
                    let mut m = k + 1;
                    while lines[m].trim() != "```" {
                        m += 1;
                    }
                    i = m + 1;
                } else {
                    i = j + 1;
                }
                let errs = check_example(&code);
                if !errs.is_empty() {
                    out.push(String::new());
                    out.push("```text".into());
                    for e in &errs {
                        out.push(wrap(e));
                    }
                    out.push("```".into());
                }
                continue;
            }
            i += 1;
        }
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
        return;
    }
    let all = examples(&doc);
    assert!(all.len() >= 35, "the doc has an accepted and a rejected example per rule");
    let mut failures = Vec::new();
    for ex in &all {
        let got = check_example(&ex.code);
        let want = ex.errors.clone().unwrap_or_default();
        if got != want {
            failures.push(format!("{DOC}:{}: expected {want:#?}\n got {got:#?}", ex.line));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let rejected = all.iter().filter(|e| e.errors.is_some()).count();
    assert!(rejected >= 20 && all.len() - rejected >= 15, "{rejected} rejected of {}", all.len());
}

/// Odd and wrong code gets errors, never a panic of the checker (which would be a crash of
/// the proc macro in the author's editor).
#[test]
fn odd_constructs_get_errors_not_panics() {
    let snippets = [
        "let x: [u8; 4] = [0; 4]; Action::Flood",
        "let s = \"hi\"; let c = 'a'; Action::Flood",
        "let t = (1u8, 2u16).1; self.last.set(t); Action::Flood",
        "match meta.in_port { 0..=3 => Action::Flood, _ => Action::Reply }",
        "if let Some(x) = None { return Action::Flood; } Action::Reply",
        "self.nonexistent.inc(); self.hits.frobnicate(); Action::Flood",
        "pkt.ipv4().set_ttl(3); Action::Flood",
        "let a = Action::Forward; Action::Bogus",
        "Action::Drop(DropReason::Bogus)",
        "unsafe { } Action::Flood",
        "let v = async { 1 }; Action::Flood",
        "loop { break; } Action::Flood",
        "'outer: for i in 0..3u8 { break 'outer; } Action::Flood",
        "let f = foo::<u8>(1); let v = <u8 as Default>::default(); Action::Flood",
        "let y = -1i8; let z = -y; let q = !0u32; let r = 1u8 << 9; Action::Flood",
        "let s = Self::CONST; Action::Flood",
        "self.ip.0 = 5; Action::Flood",
        "let (a, b, c) = (1u8, 2u8); Action::Flood",
        "match 5u8 { x @ 1 => Action::Flood, _ => Action::Reply }",
        "self.process(pkt, meta)",
        "Self::helper(); Action::Flood",
        "let m = Meta { in_port: 0, len: 0, timestamp: 0 }; let b = meta.bogus; Action::Flood",
        "for i in 0..=3u8 { pkt.set_byte(i as usize, i); } Action::Flood",
        "let x = u13::new(9000); let big = 1u128 << 127; Action::Flood",
        "return;",
        "let x = 5; x.wrapping_add(1); Action::Flood",
        "let n: Option<u8> = None; let k = n.unwrap_or(3); Action::Forward(k)",
        "let q = self.table.get(5); Action::Flood",
        "let x = pkt.window()[200]; Action::Flood",
        "let x = 7 / 0; Action::Flood",
        "break; continue; Action::Flood",
        "let x = &mut self.table; let y = &self.table; Action::Flood",
        "let x = &self.table; self.table.insert(pkt.ethernet().src(), 1); Action::Flood",
        "let r = self.last.get() as u13; Action::Flood",
        "let h: ipv4::Header<&[u8]> = pkt.ipv4(); let t = h.ttl(); Action::Flood",
        "let x = 0xffff_ffff_ffff_ffff_ffff_ffff_ffff_ffff_f; Action::Flood",
        "Action::Flood\n// in the module:\nfn f<T>(x: T) -> T { x }\nenum E { A(u8) }\nconst C: Param = 1;",
        "Action::Flood\n// in the state struct:\nx: Counter<0>,\ny: HashTable<Mac, Port>,\nz: Tcam<Mac, Port, 4, 5>,",
    ];
    // Valid subset code among them.
    let accepted = [
        "let t = (1u8, 2u16).1; self.last.set(t); Action::Flood",
        "match meta.in_port { 0..=3 => Action::Flood, _ => Action::Reply }",
        "let y = -1i8; let z = -y; let q = !0u32; let r = 1u8 << 9; Action::Flood",
        "for i in 0..=3u8 { pkt.set_byte(i as usize, i); } Action::Flood",
        "let n: Option<u8> = None; let k = n.unwrap_or(3); Action::Forward(k)",
        "let h: ipv4::Header<&[u8]> = pkt.ipv4(); let t = h.ttl(); Action::Flood",
        "let x: [u8; 4] = [0; 4]; Action::Flood",
        // Items `process` does not reach are the CPU's.
        "Action::Flood\n// in the module:\nfn f<T>(x: T) -> T { x }\nenum E { A(u8) }\nconst C: Param = 1;",
    ];
    for s in snippets {
        let errors = check_example(s);
        assert_eq!(errors.is_empty(), accepted.contains(&s), "{s}: {errors:?}");
    }
    assert_eq!(check_example("let x = 7u8 / 0; Action::Flood"), ["division by zero"]);
}

/// The contract with `emu hls`: `HLS_SOURCE`, as the macro emitted it, parses as a module
/// and checks with the attribute's window.
#[test]
fn hls_source_round_trips() {
    for (source, window, state) in [
        (learning_switch::HLS_SOURCE, learning_switch::HLS_WINDOW, "LearningSwitch"),
        (icmp_echo::HLS_SOURCE, icmp_echo::HLS_WINDOW, "IcmpEcho"),
    ] {
        let m: syn::ItemMod = syn::parse_str(source).unwrap();
        let nf = check_module(&m, &Options { window }).unwrap_or_else(|e| panic!("{}", show(&e)));
        assert_eq!(nf.state.name, state);
    }
    assert_eq!((learning_switch::HLS_PORTS, learning_switch::HLS_WINDOW), (4, 64));
    assert_eq!((icmp_echo::HLS_PORTS, icmp_echo::HLS_WINDOW), (4, 128));
}

#[test]
fn a_refused_field_type_is_one_error_not_one_per_use() {
    let errors = messages(
        "mod m { use emu::prelude::*;
         pub struct S { flows: Vec<u32>, last: f32, hits: Counter }
         impl NetworkFunction for S {
             fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                 let n = self.flows.len();
                 self.flows.push(3);
                 let x = self.last;
                 self.last = 1;
                 if self.flows[0] == 2 { self.hits.inc(); }
                 Action::Flood
             }
         } }",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].starts_with("`Vec` is a growable"), "{errors:#?}");
    assert!(errors[1].starts_with("floating point"), "{errors:#?}");
}

#[test]
fn arrays_say_what_stays_out() {
    let errors = messages(
        "mod m { use emu::prelude::*;
         pub struct S { hits: Counter, ring: [u8; 4] }
         impl NetworkFunction for S {
             fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                 let mut a = [0u8; 2];
                 a[1] = pkt.byte(14);
                 let b = [pkt.byte(15), pkt.byte(16)];
                 let c = b[meta.in_port as usize];
                 Action::Forward(c)
             }
         } }",
    );
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].contains("`[u8; 4]`"), "{errors:#?}");
    assert!(errors[1].starts_with("an element of an array is not assigned"), "{errors:#?}");
    assert!(errors[2].starts_with("this index can be up to 255, past the end of `b` (2 elements)"), "{errors:#?}");
}

#[test]
fn struct_literals_name_every_field() {
    let errors = messages(
        "mod m { use emu::prelude::*;
         #[derive(Clone, Copy, Default, PartialEq, Eq, Bits)]
         pub struct Flow { src: Ipv4Addr, port: u16 }
         pub struct S { seen: Lru<Flow, u8, 8> }
         impl NetworkFunction for S {
             fn process(&mut self, pkt: &mut Packet, meta: &Meta) -> Action {
                 let a = Flow { src: pkt.ipv4().src() };
                 let b = Flow { src: pkt.ipv4().src(), port: 1, proto: 6 };
                 let c = Flow { src: pkt.ipv4().src(), port: 2 };
                 let p = c.prot;
                 self.seen.insert(c, 1);
                 Action::Flood
             }
         } }",
    );
    assert_eq!(
        errors,
        [
            "missing field `port` of `Flow`",
            "`Flow` has no field `proto`",
            "`Flow` has no field `prot`; it has `src`, `port`",
        ],
        "{errors:#?}"
    );
}
