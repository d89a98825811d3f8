//! Per-cycle output traces: in plain ([`Trace`], rendered as JSON lines and as a VCD that GTKWave
//! opens) and encrypted on the server ([`EncryptedTrace`], which the client decrypts into the same
//! [`Trace`]).

use std::fmt::Write as _;

use vsp_circuit::{client, Circuit};
use vsp_codec::{FileCodec, Reader};
use vsp_tfhe::{Params, Tlwe};

use super::request::{name_of, put_named};
use super::*;
use crate::error::{PlatformError, Result};
use crate::keys::ClientKey;
use crate::processor::packets::{get_cells, put_cells};
use crate::wire::envelope::{check_same_key, vsp_file, Stamp, Writer};

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

/// Every cycle's encrypted outputs of a circuit run on the server (`vsp circuit exec --trace`),
/// which the client decrypts into the [`Trace`] a plain run writes ([`decrypt_circuit_trace`]).
/// Held in memory until written: one TLWE per output bit per cycle.
pub struct EncryptedTrace {
    stamp: Stamp,
    fingerprint: [u8; 32],
    signals: Vec<(String, usize)>,
    first: Option<u64>,
    /// Cycles recorded.
    cycles: u64,
    /// Per cycle, per output, its cells, one after another.
    cells: Vec<Tlwe<u32>>,
    /// The cells' parameter set.
    params: Params,
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
            cycles: 0,
            cells: Vec::new(),
            params: *machine.engine.backend().params(),
        }
    }

    /// Records the outputs of engine cycle `cycle` (consecutive from the first recorded).
    pub(super) fn record(&mut self, cycle: u64, outputs: Vec<Vec<Tlwe<u32>>>) -> Result<()> {
        let first = *self.first.get_or_insert(cycle);
        if cycle != first + self.cycles || self.cycles >= MAX_TRACE_CYCLES {
            return Err(PlatformError::usage(format!(
                "an encrypted trace holds consecutive cycles, at most {MAX_TRACE_CYCLES}"
            )));
        }
        let widths = outputs.iter().map(Vec::len);
        if !widths.eq(self.signals.iter().map(|(_, w)| *w)) {
            return Err(PlatformError::usage(
                "the engine's outputs are not the traced circuit's",
            ));
        }
        self.cells.extend(outputs.into_iter().flatten());
        self.cycles += 1;
        Ok(())
    }
}

/// The trace's file: fingerprint ‖ first cycle u64 ‖ cycle count u64 ‖ outputs (u32 count ‖ name
/// blob ‖ width u32) ‖ per cycle, per output, its cells. Its context is the parameter set (the
/// cells' size); which circuit it is of is checked when it is decrypted.
impl FileCodec for EncryptedTrace {
    vsp_file!(Trace, Params);

    fn write_body(&self, w: &mut Writer) {
        w.bytes(&self.fingerprint);
        w.u64(self.first.unwrap_or(0));
        w.u64(self.cycles);
        put_named(w, &self.signals, |w, width| w.u32(*width as u32));
        let mut at = 0;
        for _ in 0..self.cycles {
            for (_, width) in &self.signals {
                put_cells(w, &self.cells[at..at + width], &self.params);
                at += width;
            }
        }
    }

    fn read_body(param: &[u8], r: &mut Reader<'_>, params: &Params) -> Result<Self> {
        let stamp = Stamp::parse(param)?;
        let fingerprint: [u8; 32] = r.array("body")?;
        let first = r.u64("body")?;
        let n = r.u64("body")?;
        if n > MAX_TRACE_CYCLES || first.checked_add(n).is_none() {
            return Err(corrupt(format!("{n} cycles from cycle {first}")));
        }
        // Each output takes bytes of the file: the count is not trusted with an allocation.
        let count = r.u32("body")?;
        let mut signals = Vec::new();
        for _ in 0..count {
            let name = name_of(r)?;
            signals.push((name, r.u32("body")? as usize));
        }
        let mut cells = Vec::new();
        for _ in 0..n {
            for (_, width) in &signals {
                cells.extend(get_cells(r, *width, params)?);
            }
        }
        Ok(EncryptedTrace {
            stamp,
            fingerprint,
            signals,
            first: Some(first),
            cycles: n,
            cells,
            params: *params,
        })
    }
}

fn corrupt(m: String) -> PlatformError {
    PlatformError::format(format!("corrupt encrypted trace: {m}"))
}

/// Decrypts an encrypted trace of `circuit` (from `vsp circuit exec --trace`) into the trace a
/// plain run writes: the same JSON lines and VCD, the same cycle numbers.
pub fn decrypt_circuit_trace(
    key: &ClientKey,
    trace: &EncryptedTrace,
    circuit: &Circuit,
) -> Result<Trace> {
    check_same_key(
        "the trace",
        trace.stamp.key_id,
        &trace.stamp.params_name,
        key.key_id,
        &key.params_name,
    )?;
    if trace.fingerprint != circuit.fingerprint() {
        return Err(PlatformError::KeyMismatch(
            "the trace is of another circuit (its fingerprint differs)".into(),
        ));
    }
    let count = trace.signals.len();
    if count != circuit.outputs().len() {
        return Err(corrupt(format!(
            "{count} outputs, the circuit has {}",
            circuit.outputs().len()
        )));
    }
    for ((name, width), p) in trace.signals.iter().zip(circuit.outputs()) {
        if *name != p.name || *width != p.bits.len() {
            return Err(corrupt(format!(
                "output {:?} of {width} bits where {:?} of {} was expected",
                crate::files::text::excerpt(name),
                p.name,
                p.bits.len()
            )));
        }
    }
    let mut plain = Trace::new(trace.signals.clone());
    let mut cells = trace.cells.iter();
    let first = trace.first.unwrap_or(0);
    for cycle in first..first + trace.cycles {
        let values = trace
            .signals
            .iter()
            .map(|(_, w)| {
                let bits: Vec<Tlwe<u32>> = cells.by_ref().take(*w).cloned().collect();
                Ok(client::decrypt_value(&key.sk, &bits)?)
            })
            .collect::<Result<Vec<u64>>>()?;
        plain.record(cycle, &values);
    }
    Ok(plain)
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
}
