//! The inputs file of `vsp circuit` (docs/circuit.md), read strictly and checked against the
//! circuit, and its loading into a plain engine.

use std::collections::BTreeMap;
use std::path::Path;

use vsp_circuit::{Circuit, Engine, PlainBackend};

use crate::error::{PlatformError, Result};

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

pub(super) fn input_width(circuit: &Circuit, name: &str) -> Result<usize> {
    circuit
        .input(name)
        .map(|p| p.bits.len())
        .ok_or_else(|| PlatformError::usage(format!("the circuit has no input @{name}")))
}

pub(super) fn memory_spec<'c>(
    circuit: &'c Circuit,
    name: &str,
) -> Result<&'c vsp_circuit::MemorySpec> {
    circuit
        .memory(name)
        .map(|(_, m)| &m.spec)
        .ok_or_else(|| PlatformError::usage(format!("the circuit has no memory {name:?}")))
}
