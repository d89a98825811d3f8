//! Flattening a [`Blueprint`] into one [`Circuit`]: netlist instances are copied into one node list, each
//! instance input bit becomes a placeholder that the `[connect]` section points at its source, external
//! `@` ports are created from their uses, and memories are expanded (MUX) or kept as blocks (CMUX).

use std::collections::HashMap;

use crate::blueprint::{Blueprint, MemImpl, MemKind, PortRef, MAX_EXTERNAL_BITS, MAX_PORT_BITS};
use crate::circuit::{
    expand_mux_memory, finish, Circuit, Dff, ExtPort, MemBlock, Node, NodeArena, NodeId, UNSET,
};
use crate::error::CircuitError;
use crate::netlist::Cell;

/// The ports of one instance after copying it into the arena.
#[derive(Default)]
struct Instance {
    /// Input port name → placeholder nodes.
    inputs: HashMap<String, Vec<NodeId>>,
    /// Output port name → driving nodes.
    outputs: HashMap<String, Vec<NodeId>>,
}

/// Checks every bit range of the connections (a `PortRef` may also be built in code, not parsed):
/// ascending and below [`MAX_PORT_BITS`], so the width arithmetic below cannot overflow and no
/// range can cause a huge allocation.
fn check_ranges(bp: &Blueprint) -> Result<(), CircuitError> {
    for r in bp.connections.iter().flat_map(|(d, s)| [d, s]) {
        let range = match r {
            PortRef::External { range, .. } | PortRef::Node { range, .. } => *range,
            PortRef::Const(_) => None,
        };
        if let Some((a, b)) = range {
            if a > b || b >= MAX_PORT_BITS {
                return Err(CircuitError::Blueprint(format!(
                    "bad bit range in \"{r}\": it must be ascending and below {MAX_PORT_BITS}"
                )));
            }
        }
    }
    Ok(())
}

fn too_many_external_bits(what: &str) -> CircuitError {
    CircuitError::Blueprint(format!(
        "the external {what} ports have more than {MAX_EXTERNAL_BITS} bits in all"
    ))
}

pub(crate) fn flatten(bp: &Blueprint) -> Result<Circuit, CircuitError> {
    check_ranges(bp)?;
    let mut arena = NodeArena::default();
    let mut dffs: Vec<Dff> = Vec::new();
    let mut inst: HashMap<String, Instance> = HashMap::new();

    for (iname, net) in &bp.netlists {
        let off = arena.nodes.len() as NodeId;
        let w = |x: crate::Wire| off + x.0;
        let mut ins = Instance::default();
        for (i, c) in net.cells().iter().enumerate() {
            let name = format!("{iname}/{}", net.cell_name(crate::Wire(i as u32)));
            let node = match *c {
                Cell::Input { .. } => {
                    arena.placeholder(name);
                    continue;
                }
                Cell::Const(v) => Node::Const(v),
                Cell::Not(a) => Node::Not(w(a)),
                Cell::Gate(k, a, b) => Node::Gate(k, w(a), w(b)),
                Cell::Mux { s, a, b } => Node::Mux {
                    s: w(s),
                    a: w(a),
                    b: w(b),
                },
                Cell::Dff { d, init } => {
                    let q = off + i as u32;
                    dffs.push(Dff { q, d: w(d), init });
                    Node::Dff((dffs.len() - 1) as u32)
                }
            };
            arena.push(node, name);
        }
        for p in net.inputs() {
            ins.inputs
                .insert(p.name.clone(), p.bits.iter().map(|&b| w(b)).collect());
        }
        for p in net.outputs() {
            ins.outputs
                .insert(p.name.clone(), p.bits.iter().map(|&b| w(b)).collect());
        }
        inst.insert(iname.clone(), ins);
    }

    // Memories: placeholders for their inputs; outputs are MemOut nodes (CMUX) or expanded trees (MUX).
    let mut mems: Vec<MemBlock> = Vec::new();
    for spec in &bp.memories {
        let mut ins = Instance::default();
        let mk = |arena: &mut NodeArena, port: &str, w: usize| -> Vec<NodeId> {
            (0..w)
                .map(|i| arena.placeholder(format!("{}/{port}[{i}]", spec.name)))
                .collect()
        };
        let addr = mk(&mut arena, "addr", spec.addr_width);
        ins.inputs.insert("addr".into(), addr.clone());
        let (wren, wdata) = if spec.kind == MemKind::Ram {
            let we = mk(&mut arena, "wren", 1);
            let wd = mk(&mut arena, "wdata", spec.data_width);
            ins.inputs.insert("wren".into(), we.clone());
            ins.inputs.insert("wdata".into(), wd.clone());
            (we.first().copied(), wd)
        } else {
            (None, Vec::new())
        };
        let block = match spec.imp {
            MemImpl::Cmux => {
                let m = mems.len() as u32;
                let rdata = (0..spec.data_width as u32)
                    .map(|bit| {
                        arena.push(
                            Node::MemOut { mem: m, bit },
                            format!("{}/rdata[{bit}]", spec.name),
                        )
                    })
                    .collect();
                MemBlock {
                    spec: spec.clone(),
                    addr,
                    wren,
                    wdata,
                    rdata,
                    cells: Vec::new(),
                }
            }
            MemImpl::Mux => expand_mux_memory(&mut arena, &mut dffs, spec, addr, wren, wdata),
        };
        ins.outputs.insert("rdata".into(), block.rdata.clone());
        mems.push(block);
        inst.insert(spec.name.clone(), ins);
    }

    // External inputs: width = widest use (whole-port uses take the destination's width).
    let mut ext_in_width: Vec<(String, usize)> = Vec::new();
    for (dst, src) in &bp.connections {
        if let PortRef::External { name, range } = src {
            let w = match range {
                Some((_, b)) => b + 1,
                None => resolve_width(dst, &inst)?,
            };
            match ext_in_width.iter_mut().find(|(n, _)| n == name) {
                Some((_, old)) => *old = (*old).max(w),
                None => ext_in_width.push((name.clone(), w)),
            }
        }
    }
    let total_in = ext_in_width
        .iter()
        .try_fold(0usize, |acc, (_, w)| acc.checked_add(*w))
        .filter(|&t| t <= MAX_EXTERNAL_BITS);
    if total_in.is_none() {
        return Err(too_many_external_bits("input"));
    }
    let mut inputs = Vec::new();
    let mut n_input_bits = 0u32;
    for (name, w) in &ext_in_width {
        let bits = (0..*w)
            .map(|i| {
                n_input_bits += 1;
                arena.push(Node::Input(n_input_bits - 1), format!("@{name}[{i}]"))
            })
            .collect();
        inputs.push(ExtPort {
            name: name.clone(),
            bits,
        });
    }
    let ext_in: HashMap<String, Vec<NodeId>> = inputs
        .iter()
        .map(|p| (p.name.clone(), p.bits.clone()))
        .collect();

    let mut outputs: Vec<ExtPort> = Vec::new();
    let mut output_bits = 0usize;
    let mut consts: [Option<NodeId>; 2] = [None, None];
    for (dst, src) in &bp.connections {
        let src_bits: Vec<NodeId> = match src {
            PortRef::Const(v) => {
                let w = resolve_width(dst, &inst)?;
                let c = *consts[usize::from(*v)].get_or_insert_with(|| {
                    arena.push(Node::Const(*v), format!("const{}", u8::from(*v)))
                });
                vec![c; w]
            }
            PortRef::External { name, range } => slice(&ext_in[name], *range, src)?,
            PortRef::Node { node, port, range } => slice(
                port_bits(&inst, src, node, port, Side::Output)?,
                *range,
                src,
            )?,
        };
        match dst {
            PortRef::Const(_) => {
                return Err(CircuitError::Blueprint(format!(
                    "a constant cannot be a destination (\"{dst}\" = \"{src}\")"
                )))
            }
            PortRef::External { name, range } => {
                let (lo, hi) = range.unwrap_or((0, src_bits.len().saturating_sub(1)));
                if hi - lo + 1 != src_bits.len() {
                    return Err(width_err(dst, hi - lo + 1, src, src_bits.len()));
                }
                let port = match outputs.iter_mut().position(|p| &p.name == name) {
                    Some(k) => &mut outputs[k],
                    None => {
                        outputs.push(ExtPort {
                            name: name.clone(),
                            bits: Vec::new(),
                        });
                        outputs
                            .last_mut()
                            .ok_or_else(|| CircuitError::Usage("internal".into()))?
                    }
                };
                if port.bits.len() <= hi {
                    output_bits += hi + 1 - port.bits.len();
                    if output_bits > MAX_EXTERNAL_BITS {
                        return Err(too_many_external_bits("output"));
                    }
                    port.bits.resize(hi + 1, UNSET);
                }
                for (k, &b) in src_bits.iter().enumerate() {
                    if port.bits[lo + k] != UNSET {
                        return Err(CircuitError::Blueprint(format!(
                            "external output @{name}[{}] is driven twice",
                            lo + k
                        )));
                    }
                    port.bits[lo + k] = b;
                }
            }
            PortRef::Node { node, port, range } => {
                let dst_bits = slice(port_bits(&inst, dst, node, port, Side::Input)?, *range, dst)?;
                if dst_bits.len() != src_bits.len() {
                    return Err(width_err(dst, dst_bits.len(), src, src_bits.len()));
                }
                for (d, s) in dst_bits.into_iter().zip(src_bits) {
                    let slot = &mut arena.alias[d as usize];
                    if *slot != Some(UNSET) {
                        return Err(CircuitError::Blueprint(format!(
                            "input {} is connected twice",
                            arena.names[d as usize]
                        )));
                    }
                    *slot = Some(s);
                }
            }
        }
    }
    for p in &outputs {
        if let Some(k) = p.bits.iter().position(|&b| b == UNSET) {
            return Err(CircuitError::Blueprint(format!(
                "external output @{}[{k}] is not driven (only some bits of it are connected)",
                p.name
            )));
        }
    }
    finish(arena, inputs, outputs, dffs, mems, n_input_bits)
}

fn list<'a>(it: impl Iterator<Item = &'a String>) -> String {
    let mut v: Vec<&String> = it.collect();
    v.sort();
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

fn unknown_node(node: &str, r: &PortRef) -> CircuitError {
    CircuitError::Blueprint(format!("{r}: no [[file]] or [[builtin]] is named {node:?}"))
}

/// Which ports of an instance a reference names: its outputs (a source) or its inputs (a
/// destination).
#[derive(Clone, Copy)]
enum Side {
    Input,
    Output,
}

/// The bits of the `side` port `port` of instance `node`, which the reference `r` names (a missing
/// instance or port is an error naming `r` and, for a port, the instance's ports on that side).
fn port_bits<'a>(
    inst: &'a HashMap<String, Instance>,
    r: &PortRef,
    node: &str,
    port: &str,
    side: Side,
) -> Result<&'a [NodeId], CircuitError> {
    let i = inst.get(node).ok_or_else(|| unknown_node(node, r))?;
    let (ports, dir) = match side {
        Side::Input => (&i.inputs, "input"),
        Side::Output => (&i.outputs, "output"),
    };
    ports.get(port).map(Vec::as_slice).ok_or_else(|| {
        CircuitError::Blueprint(format!(
            "{r}: {node} has no {dir} port {port:?} ({dir}s: {})",
            list(ports.keys())
        ))
    })
}

fn width_err(dst: &PortRef, dw: usize, src: &PortRef, sw: usize) -> CircuitError {
    CircuitError::WidthMismatch(format!(
        "\"{dst}\" is {dw} bits wide but \"{src}\" is {sw} bits"
    ))
}

fn slice(
    bits: &[NodeId],
    range: Option<(usize, usize)>,
    r: &PortRef,
) -> Result<Vec<NodeId>, CircuitError> {
    match range {
        None => Ok(bits.to_vec()),
        Some((a, b)) => bits.get(a..=b).map(<[NodeId]>::to_vec).ok_or_else(|| {
            CircuitError::WidthMismatch(format!("{r}: the port has only {} bits", bits.len()))
        }),
    }
}

fn resolve_width(dst: &PortRef, inst: &HashMap<String, Instance>) -> Result<usize, CircuitError> {
    match dst {
        PortRef::Node { node, port, range } => match range {
            Some((a, b)) => Ok(b - a + 1),
            None => port_bits(inst, dst, node, port, Side::Input).map(<[NodeId]>::len),
        },
        PortRef::External {
            range: Some((a, b)),
            ..
        } => Ok(b - a + 1),
        _ => Err(CircuitError::Blueprint(format!(
            "\"{dst}\": an external output fed by an external input or a constant needs a bit range"
        ))),
    }
}
