//! Importer for Yosys JSON (`write_json`) of a design synthesized to the TFHE gate set.
//!
//! Accepted cells: `$_NOT_ $_AND_ $_NAND_ $_ANDNOT_ $_OR_ $_NOR_ $_ORNOT_ $_XOR_ $_XNOR_ $_MUX_ $_DFF_P_`,
//! plus constant drivers (`"0"`, `"1"`; `"x"`/`"z"` read as 0). This is the cell set of Iyokan's Yosys
//! reader (VSP paper, seed 000); unlike Iyokan we also accept constants on cell inputs. All DFFs must share
//! one clock, which must be an input port; that port is dropped (the engine's cycle is the clock). DFF
//! initial values come from the `init` attribute of the net a DFF drives (default 0). See `docs/yosys.md`
//! for the script that produces such JSON.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::error::CircuitError;
use crate::netlist::{Cell, GateKind, Netlist, NetlistBuilder, Wire};

/// Parses Yosys JSON text. If the file has several modules, the one marked `top` is used.
pub fn parse_yosys_json(text: &str) -> Result<Netlist, CircuitError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| CircuitError::Yosys(format!("not valid JSON: {e}")))?;
    let modules = v
        .get("modules")
        .and_then(Value::as_object)
        .ok_or_else(|| CircuitError::Yosys("no \"modules\" object".into()))?;
    let (name, module) = match modules.len() {
        0 => return Err(CircuitError::Yosys("\"modules\" is empty".into())),
        1 => modules.iter().next().ok_or_else(|| CircuitError::Yosys("no module".into()))?,
        _ => modules
            .iter()
            .find(|(_, m)| is_top(m))
            .ok_or_else(|| {
                let names: Vec<&String> = modules.keys().collect();
                CircuitError::Yosys(format!(
                    "{} modules ({names:?}) and none marked top; run `hierarchy -top <name>` and `flatten`",
                    modules.len()
                ))
            })?,
    };
    import_module(name, module)
}

/// Reads and parses a Yosys JSON file.
pub fn read_yosys_json(path: &std::path::Path) -> Result<Netlist, CircuitError> {
    let text =
        vsp_codec::read_text_bounded(path, vsp_codec::limits::NETLIST, "a Yosys JSON netlist")?;
    parse_yosys_json(&text).map_err(|e| e.in_netlist_file(&path.display().to_string()))
}

fn is_top(m: &Value) -> bool {
    match m.get("attributes").and_then(|a| a.get("top")) {
        Some(Value::String(s)) => s.trim_start_matches('0').starts_with('1'),
        Some(Value::Number(n)) => n.as_u64() == Some(1),
        _ => false,
    }
}

/// A bit in Yosys JSON: a net number or a constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Bit {
    Net(u64),
    Const(bool),
}

fn parse_bits(v: &Value, what: &str) -> Result<Vec<Bit>, CircuitError> {
    let arr = v
        .as_array()
        .ok_or_else(|| CircuitError::Yosys(format!("{what}: \"bits\" is not an array")))?;
    arr.iter()
        .map(|b| match b {
            Value::Number(n) => n
                .as_u64()
                .map(Bit::Net)
                .ok_or_else(|| CircuitError::Yosys(format!("{what}: bad net number {n}"))),
            Value::String(s) => match s.as_str() {
                "1" => Ok(Bit::Const(true)),
                "0" | "x" | "z" => Ok(Bit::Const(false)),
                other => Err(CircuitError::Yosys(format!(
                    "{what}: bad constant bit {other:?}"
                ))),
            },
            other => Err(CircuitError::Yosys(format!("{what}: bad bit {other}"))),
        })
        .collect()
}

fn hint_for(ty: &str) -> String {
    let legal = "abc -g AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX";
    if ty.starts_with("$_DFF_N") {
        "negative-edge flip-flops are not supported: the engine has one positive-edge clock".into()
    } else if ty.starts_with("$_SDFF")
        || ty.starts_with("$_DFFE")
        || ty.starts_with("$_DFFSR")
        || ty.starts_with("$_ALDFF")
        || ty.starts_with("$_SDFFE")
        || ty.starts_with("$_SDFFCE")
        || (ty.starts_with("$_DFF_") && ty.len() > 8)
    {
        "legalize flip-flops with `dfflegalize -cell $_DFF_P_ 01` (then re-run abc)".into()
    } else if ty.starts_with("$_DLATCH") || ty.starts_with("$_SR") {
        "latches are not supported; describe the state with clocked flip-flops".into()
    } else if ty.starts_with("$mem") {
        "a memory: map it to flip-flops and MUXes with `memory_map`, then lower it with `techmap` before `abc` (hw/synth/flow.ys does both; docs/yosys.md), or use a blueprint builtin rom/ram".into()
    } else if ty.starts_with("$_") {
        format!("map to the supported gate set with `{legal}`")
    } else if ty.starts_with('$') {
        "a word-level cell left unmapped: lower it with `techmap` right before `abc`, after the last `opt` (`opt -full` merges gates into word-level $mux cells); hw/synth/flow.ys does (docs/yosys.md)".into()
    } else {
        "a user module instance: flatten the design (`flatten` or `synth -flatten`)".into()
    }
}

fn import_module(modname: &str, m: &Value) -> Result<Netlist, CircuitError> {
    let empty = serde_json::Map::new();
    let ports = m.get("ports").and_then(Value::as_object).unwrap_or(&empty);
    let cells = m.get("cells").and_then(Value::as_object).unwrap_or(&empty);
    let netnames = m
        .get("netnames")
        .and_then(Value::as_object)
        .unwrap_or(&empty);

    // Names and init values of nets, for messages and DFF initial values.
    let mut net_name: HashMap<u64, String> = HashMap::new();
    let mut net_init: HashMap<u64, bool> = HashMap::new();
    for (name, nn) in netnames {
        let Some(bits) = nn.get("bits") else { continue };
        let bits = parse_bits(bits, &format!("net {name}"))?;
        let hidden = nn.get("hide_name").and_then(Value::as_u64) == Some(1);
        let init = nn
            .get("attributes")
            .and_then(|a| a.get("init"))
            .and_then(Value::as_str);
        for (i, b) in bits.iter().enumerate() {
            if let Bit::Net(id) = *b {
                if !hidden || !net_name.contains_key(&id) {
                    let label = if bits.len() == 1 {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    };
                    net_name.entry(id).and_modify(|e| {
                        if !hidden {
                            *e = label.clone()
                        }
                    });
                    net_name.entry(id).or_insert(label);
                }
                if let Some(s) = init {
                    // MSB first: character at len-1-i is bit i.
                    let c = s
                        .len()
                        .checked_sub(1 + i)
                        .and_then(|k| s.as_bytes().get(k).copied());
                    if c == Some(b'1') {
                        net_init.insert(id, true);
                    }
                }
            }
        }
    }
    let label = |net: u64| {
        net_name
            .get(&net)
            .cloned()
            .unwrap_or_else(|| format!("net {net}"))
    };

    // First pass: the clock nets (DFF C pins) and cell outputs.
    let mut clock_nets: HashSet<u64> = HashSet::new();
    for (cname, c) in cells {
        let ty = c.get("type").and_then(Value::as_str).unwrap_or("");
        if ty == "$_DFF_P_" {
            let conn = c
                .get("connections")
                .and_then(|x| x.get("C"))
                .ok_or_else(|| {
                    CircuitError::Yosys(format!("cell {cname:?} ($_DFF_P_) has no C connection"))
                })?;
            for b in parse_bits(conn, cname)? {
                match b {
                    Bit::Net(n) => {
                        clock_nets.insert(n);
                    }
                    Bit::Const(_) => {
                        return Err(CircuitError::Yosys(format!(
                            "DFF {cname:?} has a constant clock"
                        )))
                    }
                }
            }
        }
    }
    if clock_nets.len() > 1 {
        let names: Vec<String> = clock_nets.iter().map(|&n| label(n)).collect();
        return Err(CircuitError::Yosys(format!(
            "module {modname}: flip-flops use {} different clocks ({names:?}); only one clock domain is supported",
            clock_nets.len()
        )));
    }

    let mut b = NetlistBuilder::new();
    let mut driver: HashMap<u64, (Wire, String)> = HashMap::new();
    let mut clock_port_found = clock_nets.is_empty();
    let mut outputs: Vec<(String, Vec<Bit>)> = Vec::new();
    for (pname, p) in ports {
        let dir = p.get("direction").and_then(Value::as_str).unwrap_or("");
        let bits = parse_bits(
            p.get("bits")
                .ok_or_else(|| CircuitError::Yosys(format!("port {pname} has no bits")))?,
            &format!("port {pname}"),
        )?;
        match dir {
            "input" => {
                if bits
                    .iter()
                    .all(|x| matches!(x, Bit::Net(n) if clock_nets.contains(n)))
                {
                    clock_port_found = true;
                    continue;
                }
                if bits
                    .iter()
                    .any(|x| matches!(x, Bit::Net(n) if clock_nets.contains(n)))
                {
                    return Err(CircuitError::Yosys(format!(
                        "input port {pname} mixes the clock with data bits"
                    )));
                }
                let wires = b.input(pname, bits.len());
                for (x, w) in bits.iter().zip(wires) {
                    if let Bit::Net(n) = *x {
                        if let Some((_, other)) = driver.insert(n, (w, format!("input {pname}"))) {
                            return Err(CircuitError::Yosys(format!(
                                "{} is driven twice (input {pname} and {other})",
                                label(n)
                            )));
                        }
                    }
                }
            }
            "output" => outputs.push((pname.clone(), bits)),
            other => {
                return Err(CircuitError::Yosys(format!(
                    "port {pname} has direction {other:?}; only input and output are supported"
                )))
            }
        }
    }
    if !clock_port_found {
        return Err(CircuitError::Yosys(format!(
            "the flip-flop clock {} is not an input port (gated or derived clocks are not supported)",
            clock_nets.iter().map(|&n| label(n)).collect::<Vec<_>>().join(",")
        )));
    }

    // Allocate one wire per cell (placeholder), remembering which net it drives.
    struct Pending<'a> {
        wire: Wire,
        name: &'a str,
        ty: &'a str,
        conn: &'a serde_json::Map<String, Value>,
    }
    let mut pending = Vec::with_capacity(cells.len());
    for (cname, c) in cells {
        let ty = c.get("type").and_then(Value::as_str).unwrap_or("");
        let out_pin = match ty {
            "$_NOT_" | "$_AND_" | "$_NAND_" | "$_ANDNOT_" | "$_OR_" | "$_NOR_" | "$_ORNOT_"
            | "$_XOR_" | "$_XNOR_" | "$_MUX_" => "Y",
            "$_DFF_P_" => "Q",
            _ => {
                return Err(CircuitError::UnsupportedCell {
                    file: None,
                    cell: cname.clone(),
                    ty: ty.to_string(),
                    hint: hint_for(ty),
                })
            }
        };
        let conn = c
            .get("connections")
            .and_then(Value::as_object)
            .ok_or_else(|| CircuitError::Yosys(format!("cell {cname:?} has no \"connections\"")))?;
        let w = b.raw(Cell::Const(false), Some(cname.clone()));
        let out = one_bit(conn, out_pin, cname)?;
        match out {
            Bit::Net(n) => {
                if let Some((_, other)) = driver.insert(n, (w, format!("cell {cname}"))) {
                    return Err(CircuitError::Yosys(format!(
                        "{} is driven twice (cell {cname} and {other})",
                        label(n)
                    )));
                }
            }
            Bit::Const(_) => {
                return Err(CircuitError::Yosys(format!(
                    "cell {cname:?} drives a constant on its output"
                )))
            }
        }
        pending.push(Pending {
            wire: w,
            name: cname,
            ty,
            conn,
        });
    }

    let mut consts: [Option<Wire>; 2] = [None, None];
    let mut resolve =
        |b: &mut NetlistBuilder, bit: Bit, user: &str| -> Result<Wire, CircuitError> {
            match bit {
                Bit::Const(v) => Ok(*consts[usize::from(v)].get_or_insert_with(|| b.constant(v))),
                Bit::Net(n) => driver.get(&n).map(|(w, _)| *w).ok_or_else(|| {
                    CircuitError::Netlist(format!("{user} reads {} which nothing drives", label(n)))
                }),
            }
        };
    for p in &pending {
        let user = format!("cell {:?}", p.name);
        let mut pin = |pin: &str| -> Result<Wire, CircuitError> {
            let bit = one_bit(p.conn, pin, p.name)?;
            resolve(&mut b, bit, &user)
        };
        let cell = match p.ty {
            "$_NOT_" => Cell::Not(pin("A")?),
            "$_MUX_" => {
                let (a, bb, s) = (pin("A")?, pin("B")?, pin("S")?);
                Cell::Mux { s, a, b: bb }
            }
            "$_DFF_P_" => {
                let d = pin("D")?;
                let init = match one_bit(p.conn, "Q", p.name)? {
                    Bit::Net(n) => net_init.get(&n).copied().unwrap_or(false),
                    Bit::Const(_) => false,
                };
                Cell::Dff { d, init }
            }
            ty => {
                let kind = match ty {
                    "$_AND_" => GateKind::And,
                    "$_NAND_" => GateKind::Nand,
                    "$_OR_" => GateKind::Or,
                    "$_NOR_" => GateKind::Nor,
                    "$_XOR_" => GateKind::Xor,
                    "$_XNOR_" => GateKind::Xnor,
                    "$_ANDNOT_" => GateKind::AndNot,
                    _ => GateKind::OrNot,
                };
                Cell::Gate(kind, pin("A")?, pin("B")?)
            }
        };
        b.set_raw(p.wire, cell)?;
    }
    for (pname, bits) in outputs {
        let wires = bits
            .into_iter()
            .map(|x| resolve(&mut b, x, &format!("output port {pname}")))
            .collect::<Result<Vec<_>, _>>()?;
        b.output(&pname, &wires);
    }
    b.build()
}

fn one_bit(
    conn: &serde_json::Map<String, Value>,
    pin: &str,
    cell: &str,
) -> Result<Bit, CircuitError> {
    let v = conn
        .get(pin)
        .ok_or_else(|| CircuitError::Yosys(format!("cell {cell:?} has no connection {pin}")))?;
    let bits = parse_bits(v, &format!("cell {cell} pin {pin}"))?;
    match bits.as_slice() {
        [x] => Ok(*x),
        _ => Err(CircuitError::Yosys(format!(
            "cell {cell:?} pin {pin} has {} bits, expected 1",
            bits.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTER: &str = r#"{"modules":{"c":{"ports":{
        "clk":{"direction":"input","bits":[2]},
        "q":{"direction":"output","bits":[3]}},
      "cells":{
        "ff":{"type":"$_DFF_P_","connections":{"C":[2],"D":[4],"Q":[3]}},
        "inv":{"type":"$_NOT_","connections":{"A":[3],"Y":[4]}}},
      "netnames":{"q":{"hide_name":0,"bits":[3],"attributes":{"init":"1"}}}}}}"#;

    #[test]
    fn imports_toggle_with_init_and_drops_clock() {
        let n = parse_yosys_json(COUNTER).unwrap();
        assert!(n.inputs().is_empty());
        let q = n.output("q").unwrap().bits[0];
        assert_eq!(
            n.cell(q),
            Some(&Cell::Dff {
                d: Wire(1),
                init: true
            })
        );
    }

    #[test]
    fn rejects_unknown_cell_with_hint() {
        let t = COUNTER.replace("$_NOT_", "$_AOI3_");
        let e = parse_yosys_json(&t).unwrap_err().to_string();
        assert!(
            e.contains("inv") && e.contains("$_AOI3_") && e.contains("abc -g"),
            "{e}"
        );
        let t = COUNTER.replace("$_DFF_P_", "$_SDFF_PP0_");
        let e = parse_yosys_json(&t).unwrap_err().to_string();
        assert!(e.contains("dfflegalize"), "{e}");
    }

    #[test]
    fn word_level_cells_and_memories_point_at_the_flow_and_name_the_file() {
        // The advice matches the flow: it runs `techmap` right before `abc -genlib` (never `abc -g`).
        for (ty, what) in [("$mux", "word-level cell"), ("$mem_v2", "a memory")] {
            let t = COUNTER.replace("$_NOT_", ty);
            let e = parse_yosys_json(&t)
                .unwrap_err()
                .in_netlist_file("design.json")
                .to_string();
            assert!(
                e.starts_with("Yosys JSON: design.json: cell")
                    && e.contains(what)
                    && e.contains("`techmap`")
                    && e.contains("before `abc`")
                    && !e.contains("abc -g")
                    && (ty == "$mux" || e.contains("memory_map"))
                    && e.contains("hw/synth/flow.ys"),
                "{e}"
            );
        }
    }

    #[test]
    fn rejects_double_driver_and_undriven() {
        let t = COUNTER.replace(r#""Y":[4]"#, r#""Y":[3]"#);
        let e = parse_yosys_json(&t).unwrap_err().to_string();
        assert!(e.contains("driven twice"), "{e}");
        let t = COUNTER.replace(r#""A":[3]"#, r#""A":[9]"#);
        let e = parse_yosys_json(&t).unwrap_err().to_string();
        assert!(e.contains("nothing drives") && e.contains("inv"), "{e}");
        assert!(parse_yosys_json("{not json")
            .unwrap_err()
            .to_string()
            .contains("not valid JSON"));
    }
}
