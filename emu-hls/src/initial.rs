//! The state elements' contents before the first packet: what the NF's constructor left in
//! them on the CPU ([`emu_core::NfDescriptor::initial_state`]), checked against the IR's
//! element declarations and put at their widths.
//!
//! Every tier past the CPU starts from this one value: the IR interpreter and the cycle model
//! load it into their [`State`]; the Verilog gives it to the registers as reset values, to the
//! arrays as their block RAM's initial contents, and to the CAMs and TCAMs as the entries they
//! are loaded with at every reset. What a tier could not carry is an error here, naming the
//! field, never a silent zero: a counter that does not start at 0, a hash table, LRU or queue
//! that is not empty (the hardware sweeps them empty at reset), a CAM whose entries or victim
//! pointer are not where inserts into an empty CAM put them.

use crate::interp::State;
use crate::ir::{BitVec, Function, StateId, StateKind, StateRole};
use emu_core::state::ElementKind;
use emu_core::ElementImage;

/// A CAM's entry from the start: entries of one CAM fill its slots 0, 1, 2, … in order, the
/// victim pointer at 0, as `insert`s into an empty `Cam` place them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CamEntry {
    /// The `Cam` element.
    pub table: StateId,
    /// Its slot.
    pub slot: usize,
    /// The key, at the key's width.
    pub key: BitVec,
    /// The value, at the value's width.
    pub value: BitVec,
}

/// A TCAM's rule from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcamRule {
    /// The `Tcam` element.
    pub table: StateId,
    /// Its slot (lower is first).
    pub slot: usize,
    /// The value compared under the mask, at the key's width.
    pub value: BitVec,
    /// The key bits that must equal the value's.
    pub mask: BitVec,
    /// What a lookup hitting the rule gives, at the result's width.
    pub result: BitVec,
}

/// An array's word that does not start at 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayWord {
    /// The `Array` element.
    pub array: StateId,
    /// The word's index.
    pub index: usize,
    /// Its value, at the element type's width.
    pub value: BitVec,
}

/// The initial contents of a function's state elements (everything not listed is zero or
/// empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Initial {
    /// Each register's initial (and reset) value, by element; `None`: zero.
    pub registers: Vec<Option<BitVec>>,
    /// Arrays' words that are not zero.
    pub array_words: Vec<ArrayWord>,
    /// CAM entries.
    pub cam_entries: Vec<CamEntry>,
    /// TCAM rules.
    pub rules: Vec<TcamRule>,
}

/// Whether the IR's element is of the CPU's kind.
fn same_kind(kind: &StateKind, cpu: ElementKind) -> bool {
    matches!(
        (kind, cpu),
        (StateKind::Register { .. }, ElementKind::Register)
            | (StateKind::Counter { .. }, ElementKind::Counter)
            | (StateKind::Array { .. }, ElementKind::Array)
            | (StateKind::Cam { .. }, ElementKind::Cam)
            | (StateKind::Lru { .. }, ElementKind::Lru)
            | (StateKind::HashTable { .. }, ElementKind::HashTable)
            | (StateKind::Tcam { .. }, ElementKind::Tcam)
            | (StateKind::Queue { .. }, ElementKind::Queue)
    )
}

fn bytes(width: u16) -> usize {
    (width as usize).div_ceil(8)
}

/// `b` at `width` bits; bits above it are an error (the CPU's element is wider than the IR's).
fn at_width(name: &str, b: &[u8], width: u16) -> Result<BitVec, String> {
    if b.len() != bytes(width) {
        return Err(format!("`{name}`: the CPU's entry has {} bytes, the hardware's {width} bits", b.len()));
    }
    let v = BitVec::from_be_bytes(b);
    let r = v.resize(width);
    if r.resize(v.width()) != v {
        return Err(format!("`{name}`: the CPU's value has bits above the hardware's {width}"));
    }
    Ok(r)
}

impl Initial {
    /// All zero: a function whose constructor sets nothing (an NF compiled from a file).
    pub fn zero(func: &Function) -> Initial {
        Initial { registers: vec![None; func.states.len()], ..Initial::default() }
    }

    /// The contents the CPU's NF leaves in its state (`images`, every element its
    /// `elements()` shows): each field of the state struct must be among them, or a wrapper
    /// NF that forgot to forward `elements()` would start the other tiers at zero.
    pub fn from_cpu(func: &Function, images: &[ElementImage]) -> Result<Initial, String> {
        Initial::shows_every_field(func, images)?;
        Initial::from_images(func, images)
    }

    /// The check of [`Initial::from_cpu`] alone: every field of the state struct has its image.
    pub fn shows_every_field(func: &Function, images: &[ElementImage]) -> Result<(), String> {
        for (_, decl) in func.states.iter().filter(|(_, d)| d.role == StateRole::Field) {
            if !images.iter().any(|i| i.name == decl.name) {
                return Err(format!(
                    "`{}` is in the NF's state, but the CPU's NF does not show it (NetworkFunction::elements): \
                     an NF that wraps another must forward elements() to it",
                    decl.name
                ));
            }
        }
        Ok(())
    }

    /// The contents `images` gives `func`'s elements; elements without an image start at
    /// zero. Every image must name an element (the CPU struct and the IR come from the same
    /// source).
    pub fn from_images(func: &Function, images: &[ElementImage]) -> Result<Initial, String> {
        let mut init = Initial::zero(func);
        for img in images {
            let name = img.name;
            let id = func
                .state_by_name(name)
                .ok_or_else(|| format!("the CPU's state has `{name}`, which the hardware's does not"))?;
            init.load(id, &func.states[id].kind, img)?;
        }
        Ok(init)
    }

    fn load(&mut self, id: StateId, kind: &StateKind, img: &ElementImage) -> Result<(), String> {
        let name = img.name;
        if !same_kind(kind, img.kind) {
            return Err(format!("`{name}` is {} in the hardware but a {:?} on the CPU", kind.with_article(), img.kind));
        }
        let size = kind.size().unwrap_or(1) as usize;
        if img.entries.len() != size {
            return Err(format!("`{name}` has {size} entries in the hardware but {} on the CPU", img.entries.len()));
        }
        let cannot = |what: &str| {
            Err(format!(
                "`{name}` ({}) is not empty when the NF's constructor returns, but the hardware's {what}; \
                 fill it from packets, or hold the entries in a Cam or Tcam, or an Array",
                kind.with_article()
            ))
        };
        match kind {
            StateKind::Register { ty } => {
                let v = at_width(name, &img.entries[0], ty.width())?;
                self.registers[id.as_u32() as usize] = (!v.is_zero()).then_some(v);
            }
            StateKind::Counter { .. } => {
                if !img.is_zero() {
                    return Err(format!(
                        "`{name}` is a counter the NF's constructor leaves at {}; counters start at 0 in hardware: \
                         use a Register for a starting value",
                        u64::from_be_bytes(img.entries[0].as_slice().try_into().unwrap_or_default())
                    ));
                }
            }
            StateKind::Array { ty, .. } => {
                for (index, e) in img.entries.iter().enumerate() {
                    let value = at_width(name, e, ty.width())?;
                    if !value.is_zero() {
                        self.array_words.push(ArrayWord { array: id, index, value });
                    }
                }
            }
            StateKind::Cam { key, value, .. } => {
                if img.unshown_state {
                    return Err(format!(
                        "`{name}`: the NF's constructor inserted more keys than the CAM holds, so its victim \
                         pointer has moved; the hardware loads a CAM as inserts into an empty one leave it: \
                         insert at most its size"
                    ));
                }
                let (kb, vb) = (bytes(key.width()), bytes(value.width()));
                let mut hole = false;
                for (slot, e) in img.entries.iter().enumerate() {
                    if e.len() != 1 + kb + vb {
                        return Err(format!("`{name}`: the CPU's entry has {} bytes, the hardware's {}", e.len(), 1 + kb + vb));
                    }
                    if e[0] == 0 {
                        hole = true;
                        continue;
                    }
                    if hole {
                        return Err(format!(
                            "`{name}`: slot {slot} is filled after an empty slot (a key the constructor removed); \
                             the hardware loads a CAM in slot order from 0, as inserts into an empty one fill it"
                        ));
                    }
                    let k = at_width(name, &e[1..1 + kb], key.width())?;
                    let v = at_width(name, &e[1 + kb..], value.width())?;
                    if self.cam_entries.iter().any(|c| c.table == id && c.key == k) {
                        return Err(format!("`{name}`: a key is in two slots"));
                    }
                    self.cam_entries.push(CamEntry { table: id, slot, key: k, value: v });
                }
            }
            StateKind::Tcam { key, value, .. } => {
                let (kb, vb) = (bytes(key.width()), bytes(value.width()));
                for (slot, e) in img.entries.iter().enumerate() {
                    if e.len() != 1 + 2 * kb + vb {
                        return Err(format!(
                            "`{name}`: the CPU's rule has {} bytes, the hardware's {}",
                            e.len(),
                            1 + 2 * kb + vb
                        ));
                    }
                    if e[0] == 0 {
                        continue;
                    }
                    self.rules.push(TcamRule {
                        table: id,
                        slot,
                        value: at_width(name, &e[1..1 + kb], key.width())?,
                        mask: at_width(name, &e[1 + kb..1 + 2 * kb], key.width())?,
                        result: at_width(name, &e[1 + 2 * kb..], value.width())?,
                    });
                }
            }
            StateKind::HashTable { .. } | StateKind::Lru { .. } => {
                if img.unshown_state || img.entries.iter().any(|e| e.first() == Some(&1)) {
                    return cannot("tables in sets start empty after every reset");
                }
            }
            StateKind::Queue { .. } => {
                if img.unshown_state {
                    return cannot("queues start empty");
                }
            }
        }
        Ok(())
    }

    /// Loads the contents into `state`, a fresh state of `func` (the IR interpreter's and the
    /// cycle model's).
    pub fn load_into(&self, func: &Function, state: &mut State) -> Result<(), String> {
        for (id, v) in func.states.iter().map(|(id, _)| id).zip(&self.registers) {
            if let Some(v) = v {
                state.set_register(&func.states[id].name, *v)?;
            }
        }
        for w in &self.array_words {
            state.load_array(&func.states[w.array].name, w.index, w.value)?;
        }
        for r in &self.rules {
            state.set_tcam(&func.states[r.table].name, r.slot, r.value, r.mask, r.result)?;
        }
        for e in &self.cam_entries {
            state.load_cam(&func.states[e.table].name, e.slot, e.key, e.value)?;
        }
        Ok(())
    }

    /// The words array `id` starts with that are not zero.
    pub fn words_of(&self, id: StateId) -> impl Iterator<Item = &ArrayWord> {
        self.array_words.iter().filter(move |w| w.array == id)
    }
}
