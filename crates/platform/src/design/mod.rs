//! Any user circuit for `vsp circuit`: a blueprint (TOML, `docs/blueprint.md`) or a bare Yosys JSON
//! netlist (`docs/yosys.md`), whose ports then become the circuit's external ports of the same name;
//! per-cycle output traces as JSON lines and as a VCD that GTKWave opens; and the client/server split
//! for any circuit on the same envelopes as the processor's: [`CircuitInputs::encrypt`] →
//! [`CircuitRequest`] → [`CircuitMachine`] (run, snapshot, resume) → [`decrypt_circuit_result`].

mod run;
mod stats;

pub use run::{
    check_reset, load_client_key, public_warning, run_encrypted, run_plain, Exec, Executed,
};
pub use stats::stats_json;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use vsp_circuit::{
    client, Blueprint, Circuit, Engine, MemImpl, MemKind, MemState, PlainBackend, TfheBackend,
    TfheRam, TfheRom,
};
use vsp_tfhe::{Params, Tlwe};

use crate::error::{PlatformError, Result, ResultExt};
use crate::keys::{ClientKey, ServerKeys};
use crate::processor::machine::{
    read_snapshot, run_engine, save_engine, snapshot_wrap, RunProgress, Snapshots, Stamp,
};
use crate::processor::packets::{check_ram_shape, get_cells, put_cells};
use crate::wire::envelope::{Envelope, KeyId, Kind, Writer};
use vsp_codec::Reader;

/// Loads `path`: a Yosys JSON netlist when the file is JSON (it starts with `{`), else a blueprint.
pub fn load_design(path: &Path) -> Result<Arc<Circuit>> {
    let text =
        vsp_codec::read_text_bounded(path, vsp_codec::limits::NETLIST, "a blueprint or netlist")?;
    // JSON (an object, and also `null`, an array, …: never a blueprint) is read as a netlist, so
    // its error is the netlist reader's, not "bad TOML".
    let json = text.trim_start().starts_with('{')
        || serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
    let circuit = if json {
        netlist_circuit(&text).in_file(path)?
    } else {
        let base = path.parent().unwrap_or(Path::new("."));
        let bp = Blueprint::from_str_with_base(&text, base).in_file(path)?;
        Circuit::compile(&bp).in_file(path)?
    };
    Ok(Arc::new(circuit))
}

/// The blueprint of a bare netlist: one instance `top`, every port wired to `@port`.
pub fn netlist_blueprint(netlist_json: &str) -> Result<String> {
    let n = vsp_circuit::parse_yosys_json(netlist_json)?;
    let mut bp = String::from(
        "[[file]]\ntype = \"yosys-json\"\npath = \"netlist.json\"\nname = \"top\"\n\n[connect]\n",
    );
    for p in n.inputs().iter().filter(|p| p.width() > 0) {
        let _ = writeln!(
            bp,
            "{} = {}",
            quote(&format!("top/{}", p.name)),
            quote(&format!("@{}", p.name))
        );
    }
    for p in n.outputs().iter().filter(|p| p.width() > 0) {
        let _ = writeln!(
            bp,
            "{} = {}",
            quote(&format!("@{}", p.name)),
            quote(&format!("top/{}", p.name))
        );
    }
    Ok(bp)
}

pub(crate) fn netlist_circuit(text: &str) -> Result<Circuit> {
    let bp = netlist_blueprint(text)?;
    let bp = Blueprint::from_str_with_resolver(&bp, |_| Ok(text.to_string()))?;
    Ok(Circuit::compile(&bp)?)
}

/// A TOML basic string.
fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// Output values cycle by cycle, rendered as JSON lines and as a VCD.
pub struct Trace {
    /// (name, width) of each traced output.
    signals: Vec<(String, usize)>,
    jsonl: String,
    vcd_body: String,
    last: Vec<Option<u64>>,
    cycles: u64,
}

impl Trace {
    /// A trace of outputs `signals` (name, width in bits).
    pub fn new(signals: Vec<(String, usize)>) -> Trace {
        let n = signals.len();
        Trace {
            signals,
            jsonl: String::new(),
            vcd_body: String::new(),
            last: vec![None; n],
            cycles: 0,
        }
    }

    /// Records the outputs of `cycle` (values in the order of the signals).
    pub fn record(&mut self, cycle: u64, values: &[u64]) {
        let mut obj = serde_json_like(&self.signals, values);
        obj.insert_str(0, &format!("{{\"cycle\":{cycle},\"outputs\":"));
        obj.push('}');
        self.jsonl.push_str(&obj);
        self.jsonl.push('\n');
        let mut changes = String::new();
        for (i, ((_, w), &v)) in self.signals.iter().zip(values).enumerate() {
            if self.last[i] != Some(v) {
                changes.push_str(&vcd_value(*w, v, &vcd_id(i)));
                self.last[i] = Some(v);
            }
        }
        if cycle == 0 || !changes.is_empty() {
            let _ = write!(self.vcd_body, "#{cycle}\n{changes}");
        }
        self.cycles = cycle + 1;
    }

    /// One JSON object per cycle: `{"cycle":0,"outputs":{"name":value,…}}`.
    pub fn json_lines(&self) -> &str {
        &self.jsonl
    }

    /// The trace as a Value Change Dump (one time unit per cycle).
    pub fn vcd(&self) -> String {
        let mut s = String::from(
            "$version vsp circuit $end\n$timescale 1 ns $end\n$scope module top $end\n",
        );
        for (i, (name, w)) in self.signals.iter().enumerate() {
            let _ = writeln!(s, "$var wire {w} {} {} $end", vcd_id(i), vcd_name(name));
        }
        s.push_str("$upscope $end\n$enddefinitions $end\n");
        s.push_str(&self.vcd_body);
        let _ = writeln!(s, "#{}", self.cycles);
        s
    }
}

fn serde_json_like(signals: &[(String, usize)], values: &[u64]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = signals
        .iter()
        .zip(values)
        .map(|((n, _), v)| (n.clone(), serde_json::Value::from(*v)))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// VCD identifier of signal `i`: printable ASCII `!`..`~`, base 94.
fn vcd_id(mut i: usize) -> String {
    let mut s = String::new();
    loop {
        s.push((b'!' + (i % 94) as u8) as char);
        i /= 94;
        if i == 0 {
            return s;
        }
        i -= 1;
    }
}

/// A VCD reference: no whitespace.
fn vcd_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

fn vcd_value(width: usize, v: u64, id: &str) -> String {
    if width == 1 {
        format!("{}{id}\n", v & 1)
    } else {
        let bits: String = (0..width.min(64))
            .rev()
            .map(|i| if (v >> i) & 1 == 1 { '1' } else { '0' })
            .collect();
        format!("b{bits} {id}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcd_ids_are_distinct_and_printable() {
        let ids: std::collections::HashSet<String> = (0..20_000).map(vcd_id).collect();
        assert_eq!(ids.len(), 20_000);
        assert!(ids
            .iter()
            .all(|s| s.bytes().all(|b| (33..=126).contains(&b))));
    }

    #[test]
    fn a_trace_renders_json_lines_and_a_vcd() {
        let mut t = Trace::new(vec![("count".into(), 4), ("done".into(), 1)]);
        t.record(0, &[0, 0]);
        t.record(1, &[1, 0]);
        t.record(2, &[1, 1]);
        assert_eq!(
            t.json_lines().lines().nth(1).unwrap(),
            r#"{"cycle":1,"outputs":{"count":1,"done":0}}"#
        );
        let vcd = t.vcd();
        assert!(
            vcd.contains("$var wire 4 ! count $end\n$var wire 1 \" done $end"),
            "{vcd}"
        );
        assert!(
            vcd.contains("#0\nb0000 !\n0\"\n#1\nb0001 !\n#2\n1\"\n#3\n"),
            "{vcd}"
        );
    }

    #[test]
    fn port_names_are_quoted_for_toml() {
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}

/// The inputs file of `vsp circuit` (docs/circuit.md): input values held for the whole run and
/// memory words from address 0. Read strictly: a JSON object with the keys `inputs` and
/// `memories` only (both optional), each a map in which a name appears once (a duplicate used to
/// be accepted, the last one winning), never an array standing for the object.
#[derive(Default, Clone, Debug)]
pub struct CircuitInputs {
    pub inputs: BTreeMap<String, u64>,
    pub memories: BTreeMap<String, Vec<u64>>,
}

/// A JSON object read into a map, refusing a name that appears twice.
struct StrictMap<T>(BTreeMap<String, T>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for StrictMap<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = StrictMap<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(k) = m.next_key::<String>()? {
                    if out.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!(
                            "{:?} is named twice",
                            vsp_codec::text::excerpt(&k)
                        )));
                    }
                    let v = m.next_value()?;
                    out.insert(k, v);
                }
                Ok(StrictMap(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl<'de> serde::Deserialize<'de> for CircuitInputs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CircuitInputs;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(r#"an object {"inputs": {…}, "memories": {…}}"#)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<CircuitInputs, A::Error> {
                use serde::de::Error as _;
                let (mut inputs, mut memories) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "inputs" if inputs.is_none() => {
                            inputs = Some(m.next_value::<StrictMap<u64>>()?.0);
                        }
                        "memories" if memories.is_none() => {
                            memories = Some(m.next_value::<StrictMap<Vec<u64>>>()?.0);
                        }
                        "inputs" | "memories" => {
                            return Err(A::Error::custom(format!("{k:?} is given twice")));
                        }
                        _ => {
                            return Err(A::Error::custom(format!(
                                "unknown key {:?} (the keys are \"inputs\" and \"memories\")",
                                vsp_codec::text::excerpt(&k)
                            )));
                        }
                    }
                }
                Ok(CircuitInputs {
                    inputs: inputs.unwrap_or_default(),
                    memories: memories.unwrap_or_default(),
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A circuit's final state in plain: what a result decrypts to.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq)]
pub struct CircuitOutputs {
    pub cycles: u64,
    pub outputs: BTreeMap<String, u64>,
    /// RAM contents (ROMs are not repeated).
    pub memories: BTreeMap<String, Vec<u64>>,
}

/// An encrypted memory of a circuit.
pub enum EncryptedMemory {
    Rom(TfheRom),
    Ram(TfheRam),
    /// MUX memory: one TLWE per bit.
    Cells(Vec<Tlwe<u32>>),
}

/// An encrypted circuit request: the inputs and memories the client encrypted, for one circuit.
pub struct CircuitRequest {
    pub params_name: String,
    pub key_id: KeyId,
    /// The circuit's fingerprint: a request runs only on the circuit it was made for.
    pub fingerprint: [u8; 32],
    pub inputs: Vec<(String, Vec<Tlwe<u32>>)>,
    pub memories: Vec<(String, EncryptedMemory)>,
}

impl CircuitInputs {
    /// Reads an inputs file.
    pub fn read(path: &Path) -> Result<CircuitInputs> {
        let text = vsp_codec::read_text_bounded(path, vsp_codec::limits::SOURCE, "an inputs file")?;
        serde_json::from_str(&text).map_err(|e| {
            let msg = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            PlatformError::format(format!(
                "{}:{}:{}: malformed inputs JSON: {}",
                path.display(),
                e.line(),
                e.column(),
                msg.strip_suffix(&at).unwrap_or(&msg)
            ))
        })
    }

    /// Checks every name against `circuit`: an unknown input or memory is refused with the file
    /// `path` and the names the circuit has, as the inputs file writes them.
    pub fn check_names(&self, circuit: &Circuit, path: &Path) -> Result<()> {
        let list = |names: Vec<&str>| -> String {
            if names.is_empty() {
                return "none".into();
            }
            let shown: Vec<String> = names.iter().take(40).map(|n| format!("{n:?}")).collect();
            let more = names.len().saturating_sub(40);
            if more > 0 {
                format!("{} and {more} more", shown.join(", "))
            } else {
                shown.join(", ")
            }
        };
        for (name, &v) in &self.inputs {
            if let Some(p) = circuit.input(name) {
                let width = p.bits.len();
                if width < 64 && v >> width != 0 {
                    return Err(PlatformError::usage(format!(
                        "{}: value {v} does not fit the {width}-bit input {name:?}",
                        path.display()
                    )));
                }
            } else {
                let valid = circuit.inputs().iter().map(|p| p.name.as_str()).collect();
                return Err(PlatformError::usage(format!(
                    "{}: the circuit has no input {:?} (its inputs: {})",
                    path.display(),
                    vsp_codec::text::excerpt(name),
                    list(valid)
                )));
            }
        }
        for name in self.memories.keys() {
            if circuit.memory(name).is_none() {
                let valid = circuit
                    .memories()
                    .iter()
                    .map(|m| m.spec.name.as_str())
                    .collect();
                return Err(PlatformError::usage(format!(
                    "{}: the circuit has no memory {:?} (its memories: {})",
                    path.display(),
                    vsp_codec::text::excerpt(name),
                    list(valid)
                )));
            }
        }
        Ok(())
    }

    /// Whether nothing would be encrypted (an encrypted run would compute on public values only).
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty() && self.memories.is_empty()
    }

    /// Encrypts every input and memory named under `key`, for `circuit`.
    pub fn encrypt(&self, key: &ClientKey, circuit: &Circuit) -> Result<CircuitRequest> {
        let sk = &key.sk;
        let mut inputs = Vec::new();
        for (name, &v) in &self.inputs {
            let width = input_width(circuit, name)?;
            if width < 64 && v >> width != 0 {
                return Err(PlatformError::usage(format!(
                    "value {v} does not fit the {width}-bit input @{name}"
                )));
            }
            inputs.push((name.clone(), client::encrypt_value(sk, v, width)));
        }
        let mut memories = Vec::new();
        for (name, words) in &self.memories {
            let spec = memory_spec(circuit, name)?;
            let (a, w) = (spec.addr_width, spec.data_width);
            let m = match (spec.imp, spec.kind) {
                (MemImpl::Cmux, MemKind::Rom) => {
                    EncryptedMemory::Rom(client::encrypt_rom(sk, a, w, words)?)
                }
                (MemImpl::Cmux, MemKind::Ram) => {
                    EncryptedMemory::Ram(client::encrypt_ram(sk, a, w, words)?)
                }
                (MemImpl::Mux, _) => {
                    EncryptedMemory::Cells(client::encrypt_mux_memory(sk, a, w, words)?)
                }
            };
            memories.push((name.clone(), m));
        }
        Ok(CircuitRequest {
            params_name: key.params_name.clone(),
            key_id: key.key_id,
            fingerprint: circuit.fingerprint(),
            inputs,
            memories,
        })
    }
}

fn input_width(circuit: &Circuit, name: &str) -> Result<usize> {
    circuit
        .input(name)
        .map(|p| p.bits.len())
        .ok_or_else(|| PlatformError::usage(format!("the circuit has no input @{name}")))
}

fn memory_spec<'c>(circuit: &'c Circuit, name: &str) -> Result<&'c vsp_circuit::MemorySpec> {
    circuit
        .memory(name)
        .map(|(_, m)| &m.spec)
        .ok_or_else(|| PlatformError::usage(format!("the circuit has no memory {name:?}")))
}

impl CircuitRequest {
    /// The request as a file: fingerprint ‖ inputs (u32 count ‖ name blob ‖ cells) ‖ memories
    /// (u32 count ‖ name blob ‖ kind u8 (0 ROM, 1 RAM, 2 cells) ‖ blob or cells).
    pub fn to_envelope(&self, params: &Params) -> Envelope {
        let mut w = Writer::default();
        w.bytes(&self.fingerprint);
        w.u32(self.inputs.len() as u32);
        for (name, bits) in &self.inputs {
            w.blob(name.as_bytes());
            put_cells(&mut w, bits, params);
        }
        w.u32(self.memories.len() as u32);
        for (name, m) in &self.memories {
            w.blob(name.as_bytes());
            match m {
                EncryptedMemory::Rom(r) => {
                    w.u8(0);
                    w.blob(&r.to_bytes());
                }
                EncryptedMemory::Ram(r) => {
                    w.u8(1);
                    w.blob(&r.to_bytes());
                }
                EncryptedMemory::Cells(c) => {
                    w.u8(2);
                    put_cells(&mut w, c, params);
                }
            }
        }
        Envelope::new(
            Kind::Request,
            &self.params_name,
            self.key_id,
            w.into_bytes(),
        )
    }

    /// Parses a request for `circuit`: the fingerprint, every name and every size is checked against
    /// the circuit before anything is decoded.
    pub fn from_envelope(env: &Envelope, circuit: &Circuit, params: &Params) -> Result<Self> {
        let corrupt = |m: String| PlatformError::format(format!("corrupt circuit request: {m}"));
        let mut r = Reader::new(&env.body);
        let fingerprint: [u8; 32] = r.array("body")?;
        if fingerprint != circuit.fingerprint() {
            return Err(PlatformError::KeyMismatch(
                "the request was made for another circuit (its fingerprint differs)".into(),
            ));
        }
        let n = r.u32("body")? as usize;
        if n > circuit.inputs().len() {
            return Err(corrupt(format!(
                "{n} inputs, the circuit has {}",
                circuit.inputs().len()
            )));
        }
        let mut inputs = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(&mut r)?;
            let width = input_width(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            inputs.push((name, get_cells(&mut r, width, params)?));
        }
        let n = r.u32("body")? as usize;
        if n > circuit.memories().len() {
            return Err(corrupt(format!(
                "{n} memories, the circuit has {}",
                circuit.memories().len()
            )));
        }
        let mut memories = Vec::with_capacity(n);
        for _ in 0..n {
            let name = name_of(&mut r)?;
            let spec = memory_spec(circuit, &name).map_err(|e| corrupt(e.to_string()))?;
            let m = match (r.u8("body")?, spec.imp, spec.kind) {
                (0, MemImpl::Cmux, MemKind::Rom) => EncryptedMemory::Rom(
                    TfheRom::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                ),
                (1, MemImpl::Cmux, MemKind::Ram) => EncryptedMemory::Ram(
                    TfheRam::from_bytes(r.blob(usize::MAX, "body")?, params)
                        .context(|| format!("memory {name}"))?,
                ),
                (2, MemImpl::Mux, _) => EncryptedMemory::Cells(get_cells(
                    &mut r,
                    (1usize << spec.addr_width) * spec.data_width,
                    params,
                )?),
                (tag, ..) => {
                    return Err(corrupt(format!(
                        "memory {name}: kind {tag} is not the circuit's ({:?} {:?})",
                        spec.imp, spec.kind
                    )))
                }
            };
            memories.push((name, m));
        }
        r.end()?;
        Ok(CircuitRequest {
            params_name: env.params.clone(),
            key_id: env.key_id,
            fingerprint,
            inputs,
            memories,
        })
    }

    /// Loads the inputs and memories into `engine`.
    pub fn load(self, engine: &mut Engine<TfheBackend>) -> Result<()> {
        for (name, bits) in self.inputs {
            engine.set_input(&name, bits)?;
        }
        for (name, m) in self.memories {
            match m {
                EncryptedMemory::Rom(r) => engine.set_rom(&name, r)?,
                EncryptedMemory::Ram(r) => engine.set_ram(&name, r)?,
                EncryptedMemory::Cells(c) => engine.set_memory_cells(&name, c)?,
            }
        }
        Ok(())
    }
}

fn name_of(r: &mut Reader<'_>) -> Result<String> {
    let b = r.blob(usize::MAX, "body")?;
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|_| PlatformError::format("corrupt circuit file: a name is not text"))
}

/// How a local run of a design (`vsp circuit run`, plain or encrypted on one machine) ends and what
/// it records.
pub struct DesignRun {
    pub cycles: u64,
    /// Stop after the first cycle in which this 1-bit output is 1 (plain runs only: an encrypted
    /// engine cannot see its outputs).
    pub until: Option<String>,
    /// Apply one reset cycle first (when the circuit has a 1-bit `@reset` input).
    pub reset: bool,
    /// Every cycle's outputs, when asked for.
    pub trace: Option<Trace>,
}

/// Runs `plan` on `engine` one cycle at a time, recording each cycle's outputs in `plan.trace`
/// (`value` reads an output: directly in plain, by decrypting in an encrypted run). In a distributed
/// run only the root engine ([`Engine::is_root`]) reads outputs, and the engine stops every rank on
/// the root's decision. Returns the cycles run.
pub fn run_design<B: vsp_circuit::Backend>(
    engine: &mut Engine<B>,
    plan: &mut DesignRun,
    value: &dyn Fn(&Engine<B>, &str) -> Result<u64>,
    progress: &mut dyn FnMut(&RunProgress<'_>),
) -> Result<u64> {
    if let Some(name) = &plan.until {
        match engine.circuit().outputs().iter().find(|p| &p.name == name) {
            Some(p) if p.bits.len() == 1 => {}
            Some(_) => {
                return Err(PlatformError::usage(format!(
                    "--until {name}: the output must be 1 bit wide"
                )))
            }
            None => {
                return Err(PlatformError::usage(format!(
                    "--until {name}: the circuit has no output @{name}"
                )))
            }
        }
    }
    crate::processor::machine::target_cycle(engine.cycle(), plan.cycles)?;
    if plan.reset {
        engine.reset()?;
    }
    let names: Vec<String> = engine
        .circuit()
        .outputs()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let one = vsp_circuit::RunOptions {
        max_cycles: 1,
        stop_when: plan.until.clone(),
        ..Default::default()
    };
    let root = engine.is_root();
    let t0 = std::time::Instant::now();
    let mut done = 0;
    while done < plan.cycles {
        let cycle = engine.cycle();
        let report = engine.run(&one, &mut |p| {
            progress(&RunProgress {
                done: done + p.cycles_done,
                total: plan.cycles,
                elapsed: t0.elapsed().as_secs_f64(),
                engine: p,
            })
        })?;
        done += 1;
        if let Some(t) = plan.trace.as_mut().filter(|_| root) {
            let e: &Engine<B> = engine;
            let values = names
                .iter()
                .map(|n| value(e, n))
                .collect::<Result<Vec<u64>>>()?;
            t.record(cycle, &values);
        }
        if report.stopped {
            break;
        }
    }
    Ok(done)
}

impl CircuitInputs {
    /// Loads the input values and memory words into a plain engine (the same in every lane).
    pub fn load_plain(&self, engine: &mut Engine<PlainBackend>) -> Result<()> {
        for (name, v) in &self.inputs {
            engine.set_input_value(name, *v)?;
        }
        for (name, words) in &self.memories {
            engine.load_memory_words(name, words)?;
        }
        Ok(())
    }
}

/// A plain run's final state (lane 0) as a result decrypts to: every output and every RAM.
pub fn plain_outputs(engine: &Engine<PlainBackend>, cycles: u64) -> Result<CircuitOutputs> {
    let c = engine.circuit();
    let mut outputs = BTreeMap::new();
    for p in c.outputs() {
        outputs.insert(p.name.clone(), engine.output_value(&p.name, 0)?);
    }
    let mut memories = BTreeMap::new();
    for m in c.memories().iter().filter(|m| m.spec.kind == MemKind::Ram) {
        memories.insert(m.spec.name.clone(), engine.memory_words(&m.spec.name, 0)?);
    }
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}

/// An encrypted circuit run on the server: the engine and the key it runs under.
pub struct CircuitMachine {
    pub engine: Engine<TfheBackend>,
    stamp: Stamp,
}

impl CircuitMachine {
    /// A run of `request` on `circuit` with the server's keys.
    pub fn start(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        request: CircuitRequest,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        keys.check_key_of("the request", request.key_id, &request.params_name)?;
        let mut m = Self::new(keys, circuit, threads)?;
        request.load(&mut m.engine)?;
        Ok(m)
    }

    /// A run on `circuit` with no request loaded: a rank of a distributed run other than the root,
    /// which takes the root's state from it instead of reading the request (docs/mpi.md).
    pub fn follower(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        Self::new(keys, circuit, threads)
    }

    fn new(keys: &ServerKeys, circuit: Arc<Circuit>, threads: Option<usize>) -> Result<Self> {
        let backend = TfheBackend::new(keys.ek.clone(), Some(keys.ck.clone()))?;
        let mut engine = Engine::new(backend, circuit);
        if let Some(t) = threads {
            engine.set_threads(t.max(1));
        }
        Ok(CircuitMachine {
            engine,
            stamp: Stamp {
                params_name: keys.params_name.clone(),
                key_id: keys.key_id,
            },
        })
    }

    /// Continues from a snapshot written by [`CircuitMachine::save`] for the same circuit.
    pub fn resume(
        keys: &ServerKeys,
        circuit: Arc<Circuit>,
        path: &Path,
        threads: Option<usize>,
    ) -> Result<CircuitMachine> {
        let env = read_snapshot(keys, path)?;
        let mut r = Reader::new(&env.body);
        if r.u8("body")? != crate::wire::tags::CIRCUIT {
            return Err(PlatformError::usage(format!(
                "{} is a processor snapshot: continue it with `vsp resume`",
                path.display()
            )));
        }
        let state = r.blob(usize::MAX, "body")?;
        r.end()?;
        let mut m = Self::new(keys, circuit, threads)?;
        m.engine
            .restore_snapshot(state)
            .context(|| format!("{}: corrupt or for another circuit", path.display()))?;
        Ok(m)
    }

    /// Writes the state atomically; returns the file's size.
    pub fn save(&self, path: &Path) -> Result<u64> {
        save_engine(&self.engine, path, &self.snapshot_wrap())
    }

    fn snapshot_wrap(&self) -> vsp_circuit::SnapshotWrap {
        snapshot_wrap(
            self.stamp.clone(),
            crate::wire::tags::MachineTag::Circuit.to_bytes(),
        )
    }

    /// [`CircuitMachine::run`], recording every cycle's encrypted outputs in `trace` (numbered as
    /// [`Trace`] numbers them: the engine's cycle, so a resumed run continues the count). The
    /// cycles run one engine run each, with a snapshot after every `snapshots.every`-th and after
    /// the last, as one run would write them.
    pub fn run_traced(
        &mut self,
        cycles: u64,
        reset: bool,
        snapshots: Option<&Snapshots>,
        trace: &mut EncryptedTrace,
        progress: &mut dyn FnMut(&RunProgress<'_>),
    ) -> Result<()> {
        crate::processor::machine::target_cycle(self.engine.cycle(), cycles)?;
        if reset {
            self.engine.reset()?;
        }
        let names: Vec<String> = self
            .engine
            .circuit()
            .outputs()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let root = self.engine.is_root();
        let t0 = std::time::Instant::now();
        for done in 0..cycles {
            let every = snapshots.map_or(1, |s| s.every.max(1));
            let write = snapshots.filter(|_| (done + 1) % every == 0 || done + 1 == cycles);
            let one = vsp_circuit::RunOptions {
                max_cycles: 1,
                snapshot: write.map(|s| s.path.clone()),
                snapshot_wrap: Some(self.snapshot_wrap()),
                ..Default::default()
            };
            let cycle = self.engine.cycle();
            self.engine.run(&one, &mut |p| {
                progress(&RunProgress {
                    done: done + p.cycles_done,
                    total: cycles,
                    elapsed: t0.elapsed().as_secs_f64(),
                    engine: p,
                })
            })?;
            if root {
                let outputs = names
                    .iter()
                    .map(|n| self.engine.output(n))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                trace.record(cycle, outputs)?;
            }
        }
        Ok(())
    }

    /// Runs `cycles` cycles (after one reset cycle when asked) with snapshots and progress as
    /// [`crate::Machine::run`] does.
    pub fn run(
        &mut self,
        cycles: u64,
        reset: bool,
        snapshots: Option<&Snapshots>,
        progress: &mut dyn FnMut(&RunProgress<'_>),
    ) -> Result<()> {
        crate::processor::machine::target_cycle(self.engine.cycle(), cycles)?;
        if reset {
            self.engine.reset()?;
        }
        let wrap = self.snapshot_wrap();
        run_engine(&mut self.engine, cycles, snapshots, wrap, progress)
    }

    /// The encrypted result: the cycle count, every output, every RAM.
    pub fn result(&self) -> Result<Envelope> {
        let e = &self.engine;
        let params = e.backend().params();
        let c = e.circuit();
        let mut w = Writer::default();
        w.bytes(&c.fingerprint());
        w.u64(e.cycle());
        w.u32(c.outputs().len() as u32);
        for p in c.outputs() {
            w.blob(p.name.as_bytes());
            put_cells(&mut w, &e.output(&p.name)?, params);
        }
        let rams: Vec<_> = c
            .memories()
            .iter()
            .filter(|m| m.spec.kind == MemKind::Ram)
            .collect();
        w.u32(rams.len() as u32);
        for m in rams {
            w.blob(m.spec.name.as_bytes());
            match e.memory(&m.spec.name)? {
                MemState::Ram(r) => {
                    w.u8(1);
                    w.blob(&r.to_bytes());
                }
                _ => {
                    w.u8(2);
                    put_cells(&mut w, &e.memory_cells(&m.spec.name)?, params);
                }
            }
        }
        Ok(Envelope::new(
            Kind::Result,
            &self.stamp.params_name,
            self.stamp.key_id,
            w.into_bytes(),
        ))
    }
}

/// Decrypts a circuit result for `circuit` (names and sizes checked against it first).
pub fn decrypt_circuit_result(
    key: &ClientKey,
    env: &Envelope,
    circuit: &Circuit,
) -> Result<CircuitOutputs> {
    key.check_file("the result", env)?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt circuit result: {m}"));
    let params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let fingerprint: [u8; 32] = r.array("body")?;
    if fingerprint != circuit.fingerprint() {
        return Err(PlatformError::KeyMismatch(
            "the result is of another circuit (its fingerprint differs)".into(),
        ));
    }
    let cycles = r.u64("body")?;
    let n = r.u32("body")? as usize;
    if n != circuit.outputs().len() {
        return Err(corrupt(format!(
            "{n} outputs, the circuit has {}",
            circuit.outputs().len()
        )));
    }
    let mut outputs = BTreeMap::new();
    for p in circuit.outputs() {
        let name = name_of(&mut r)?;
        if name != p.name {
            return Err(corrupt(format!(
                "output {name:?} where @{} was expected",
                p.name
            )));
        }
        let bits = get_cells(&mut r, p.bits.len(), params)?;
        outputs.insert(name, client::decrypt_value(&key.sk, &bits)?);
    }
    let rams: Vec<_> = circuit
        .memories()
        .iter()
        .filter(|m| m.spec.kind == MemKind::Ram)
        .collect();
    let n = r.u32("body")? as usize;
    if n != rams.len() {
        return Err(corrupt(format!("{n} RAMs, the circuit has {}", rams.len())));
    }
    let mut memories = BTreeMap::new();
    for m in rams {
        let name = name_of(&mut r)?;
        if name != m.spec.name {
            return Err(corrupt(format!(
                "RAM {name:?} where {:?} was expected",
                m.spec.name
            )));
        }
        let (a, w) = (m.spec.addr_width, m.spec.data_width);
        let words = match (r.u8("body")?, m.spec.imp) {
            (1, MemImpl::Cmux) => {
                let bytes = r.blob(usize::MAX, "body")?;
                check_ram_shape(bytes, a, w).map_err(|e| corrupt(format!("RAM {name}: {e}")))?;
                let ram = TfheRam::from_bytes(bytes, params).context(|| format!("RAM {name}"))?;
                if ram.noise_bounds().len() != 1 << a || ram.cells().len() != (1 << a) * w {
                    return Err(corrupt(format!("RAM {name} has another shape")));
                }
                client::decrypt_ram(&key.sk, &ram)?
            }
            (2, MemImpl::Mux) => {
                let cells = get_cells(&mut r, (1usize << a) * w, params)?;
                client::decrypt_mux_memory(&key.sk, w, &cells)?
            }
            (tag, _) => return Err(corrupt(format!("RAM {name}: unknown kind {tag}"))),
        };
        memories.insert(name, words);
    }
    r.end()?;
    Ok(CircuitOutputs {
        cycles,
        outputs,
        memories,
    })
}

/// Every cycle's encrypted outputs of a circuit run on the server (`vsp circuit exec --trace`),
/// which the client decrypts into the [`Trace`] a plain run writes ([`decrypt_circuit_trace`]).
/// Held in memory until written: one TLWE per output bit per cycle.
pub struct EncryptedTrace {
    stamp: Stamp,
    fingerprint: [u8; 32],
    signals: Vec<(String, usize)>,
    first: Option<u64>,
    cycles: Vec<Vec<Vec<Tlwe<u32>>>>,
}

/// Most cycles one encrypted trace holds.
pub const MAX_TRACE_CYCLES: u64 = 1 << 24;

impl EncryptedTrace {
    /// An empty trace of `machine`'s outputs.
    pub fn new(machine: &CircuitMachine) -> EncryptedTrace {
        let c = machine.engine.circuit();
        EncryptedTrace {
            stamp: machine.stamp.clone(),
            fingerprint: c.fingerprint(),
            signals: c
                .outputs()
                .iter()
                .map(|p| (p.name.clone(), p.bits.len()))
                .collect(),
            first: None,
            cycles: Vec::new(),
        }
    }

    /// Records the outputs of engine cycle `cycle` (consecutive from the first recorded).
    fn record(&mut self, cycle: u64, outputs: Vec<Vec<Tlwe<u32>>>) -> Result<()> {
        let first = *self.first.get_or_insert(cycle);
        if cycle != first + self.cycles.len() as u64 || self.cycles.len() as u64 >= MAX_TRACE_CYCLES
        {
            return Err(PlatformError::usage(format!(
                "an encrypted trace holds consecutive cycles, at most {MAX_TRACE_CYCLES}"
            )));
        }
        self.cycles.push(outputs);
        Ok(())
    }

    /// The trace as a file: fingerprint ‖ first cycle u64 ‖ cycle count u64 ‖ outputs (u32 count ‖
    /// name blob ‖ width u32) ‖ per cycle, per output, its cells.
    pub fn to_envelope(&self, params: &Params) -> Envelope {
        let mut w = Writer::default();
        w.bytes(&self.fingerprint);
        w.u64(self.first.unwrap_or(0));
        w.u64(self.cycles.len() as u64);
        w.u32(self.signals.len() as u32);
        for (name, width) in &self.signals {
            w.blob(name.as_bytes());
            w.u32(*width as u32);
        }
        for outputs in &self.cycles {
            for bits in outputs {
                put_cells(&mut w, bits, params);
            }
        }
        Envelope::new(
            Kind::Trace,
            &self.stamp.params_name,
            self.stamp.key_id,
            w.into_bytes(),
        )
    }
}

/// Decrypts an encrypted trace of `circuit` (from `vsp circuit exec --trace`) into the trace a
/// plain run writes: the same JSON lines and VCD, the same cycle numbers.
pub fn decrypt_circuit_trace(key: &ClientKey, env: &Envelope, circuit: &Circuit) -> Result<Trace> {
    key.check_file("the trace", env)?;
    let corrupt = |m: String| PlatformError::format(format!("corrupt encrypted trace: {m}"));
    let params = key.sk.params();
    let mut r = Reader::new(&env.body);
    let fingerprint: [u8; 32] = r.array("body")?;
    if fingerprint != circuit.fingerprint() {
        return Err(PlatformError::KeyMismatch(
            "the trace is of another circuit (its fingerprint differs)".into(),
        ));
    }
    let first = r.u64("body")?;
    let n = r.u64("body")?;
    if n > MAX_TRACE_CYCLES || first.checked_add(n).is_none() {
        return Err(corrupt(format!("{n} cycles from cycle {first}")));
    }
    let count = r.u32("body")? as usize;
    if count != circuit.outputs().len() {
        return Err(corrupt(format!(
            "{count} outputs, the circuit has {}",
            circuit.outputs().len()
        )));
    }
    let mut signals = Vec::with_capacity(count);
    for p in circuit.outputs() {
        let name = name_of(&mut r)?;
        let width = r.u32("body")? as usize;
        if name != p.name || width != p.bits.len() {
            return Err(corrupt(format!(
                "output {:?} of {width} bits where {:?} of {} was expected",
                crate::files::text::excerpt(&name),
                p.name,
                p.bits.len()
            )));
        }
        signals.push((name, width));
    }
    let mut trace = Trace::new(signals.clone());
    for cycle in first..first + n {
        let values = signals
            .iter()
            .map(|(_, w)| {
                Ok(client::decrypt_value(
                    &key.sk,
                    &get_cells(&mut r, *w, params)?,
                )?)
            })
            .collect::<Result<Vec<u64>>>()?;
        trace.record(cycle, &values);
    }
    r.end()?;
    Ok(trace)
}
