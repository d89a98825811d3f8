//! Any user circuit for `vsp circuit`: a blueprint (TOML, `docs/blueprint.md`) or a bare Yosys JSON
//! netlist (`docs/yosys.md`), whose ports then become the circuit's external ports of the same name;
//! and per-cycle output traces as JSON lines and as a VCD that GTKWave opens.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use vsp_circuit::{Blueprint, Circuit};

use crate::error::{PlatformError, Result, ResultExt};

/// Loads `path`: a Yosys JSON netlist when the file is JSON (it starts with `{`), else a blueprint.
pub fn load_design(path: &Path) -> Result<Arc<Circuit>> {
    let text = std::fs::read_to_string(path).map_err(|source| PlatformError::Read {
        path: path.into(),
        source,
    })?;
    let circuit = if text.trim_start().starts_with('{') {
        netlist_circuit(&text).in_file(path)?
    } else {
        let base = path.parent().unwrap_or(Path::new("."));
        Circuit::compile(&Blueprint::from_str_with_base(&text, base)?).in_file(path)?
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

fn netlist_circuit(text: &str) -> Result<Circuit> {
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
