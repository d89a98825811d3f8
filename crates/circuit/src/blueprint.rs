//! The blueprint: a TOML file that instantiates netlists and built-in memories and wires their ports,
//! with `@name` external inputs and outputs. It follows Iyokan's `NetworkBlueprint` format (VSP paper,
//! seed 000; kvsp `cahp-ruby.toml`); the full format is in `docs/blueprint.md`.
//!
//! ```toml
//! [[file]]
//! type = "yosys-json"
//! path = "core.json"
//! name = "core"
//!
//! [[builtin]]
//! type = "ram"            # CMUX RAM; "mux-ram" = flip-flops and gate trees
//! name = "ram"
//! in_addr_width = 8
//! in_wdata_width = 16
//! out_rdata_width = 16
//!
//! [connect]
//! "core/reset" = "@reset"                # destination = source
//! "ram/addr" = "core/io_ram_addr"
//! "@reg_x0[0:15]" = "core/io_x0[0:15]"
//! ```

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::CircuitError;
use crate::netlist::Netlist;

/// Which implementation a built-in memory uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemImpl {
    /// CMUX memory over TRLWE/TRGSW (vertical packing for ROM, CMUX trees for RAM).
    Cmux,
    /// Flip-flops (RAM) or stored bits (ROM) plus MUX trees of ordinary gates.
    Mux,
}

/// Read-only or read-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemKind {
    Rom,
    Ram,
}

/// A built-in memory instance: ports `addr` (in), `rdata` (out) and for RAM `wren`, `wdata` (in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySpec {
    pub name: String,
    pub kind: MemKind,
    pub imp: MemImpl,
    pub addr_width: usize,
    pub data_width: usize,
}

impl MemorySpec {
    /// Number of words (2^addr_width).
    pub fn words(&self) -> usize {
        1usize << self.addr_width
    }
}

/// A loaded blueprint: netlist instances (already imported), memories and connections.
#[derive(Clone, Debug)]
pub struct Blueprint {
    /// `(instance name, netlist)` in file order.
    pub netlists: Vec<(String, Netlist)>,
    pub memories: Vec<MemorySpec>,
    /// `(destination, source)` port references, in file order.
    pub connections: Vec<(PortRef, PortRef)>,
}

/// One side of a `[connect]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortRef {
    /// `@name` or `@name[a:b]`.
    External {
        name: String,
        range: Option<(usize, usize)>,
    },
    /// `node/port` or `node/port[a:b]`.
    Node {
        node: String,
        port: String,
        range: Option<(usize, usize)>,
    },
    /// `"0"` or `"1"`: a constant source for every bit of the destination.
    Const(bool),
}

impl std::fmt::Display for PortRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = |r: &Option<(usize, usize)>| match r {
            Some((a, b)) if a == b => format!("[{a}]"),
            Some((a, b)) => format!("[{a}:{b}]"),
            None => String::new(),
        };
        match self {
            PortRef::External { name, range } => write!(f, "@{name}{}", r(range)),
            PortRef::Node { node, port, range } => write!(f, "{node}/{port}{}", r(range)),
            PortRef::Const(v) => write!(f, "{}", u8::from(*v)),
        }
    }
}

impl PortRef {
    /// Parses `@name[a:b]`, `node/port[a:b]`, `node/port[a]`, `0` or `1`.
    pub fn parse(s: &str) -> Result<Self, CircuitError> {
        let s = s.trim();
        if s == "0" || s == "1" {
            return Ok(PortRef::Const(s == "1"));
        }
        let (body, range) = match s.find('[') {
            Some(i) => {
                let inner = s[i..]
                    .strip_prefix('[')
                    .and_then(|r| r.strip_suffix(']'))
                    .ok_or_else(|| CircuitError::Blueprint(format!("bad bit range in {s:?}")))?;
                let num = |t: &str| {
                    let v = t.trim().parse::<usize>().map_err(|_| {
                        CircuitError::Blueprint(format!("bad bit index {t:?} in {s:?}"))
                    })?;
                    if v >= MAX_PORT_BITS {
                        return Err(CircuitError::Blueprint(format!(
                            "bit index {v} in {s:?} is out of range (a port has at most {MAX_PORT_BITS} bits)"
                        )));
                    }
                    Ok(v)
                };
                let (a, b) = match inner.split_once(':') {
                    Some((a, b)) => (num(a)?, num(b)?),
                    None => (num(inner)?, num(inner)?),
                };
                if a > b {
                    return Err(CircuitError::Blueprint(format!(
                        "bit range in {s:?} must be ascending ([from:to], inclusive)"
                    )));
                }
                (&s[..i], Some((a, b)))
            }
            None => (s, None),
        };
        let ident_ok = |t: &str| {
            !t.is_empty()
                && t.chars()
                    .all(|c| c.is_alphanumeric() || "_$.\\-".contains(c))
        };
        if let Some(name) = body.strip_prefix('@') {
            if !ident_ok(name) {
                return Err(CircuitError::Blueprint(format!(
                    "bad external port name in {s:?}"
                )));
            }
            return Ok(PortRef::External {
                name: name.to_string(),
                range,
            });
        }
        match body.split_once('/') {
            Some((node, port)) if ident_ok(node) && ident_ok(port) => Ok(PortRef::Node {
                node: node.to_string(),
                port: port.to_string(),
                range,
            }),
            _ => Err(CircuitError::Blueprint(format!(
                "bad port reference {s:?}: expected `node/port[from:to]`, `@name[from:to]`, 0 or 1"
            ))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlueprint {
    #[serde(default)]
    file: Vec<RawFile>,
    #[serde(default)]
    builtin: Vec<RawBuiltin>,
    #[serde(default)]
    connect: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(rename = "type")]
    ty: String,
    path: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuiltin {
    #[serde(rename = "type")]
    ty: String,
    name: String,
    in_addr_width: usize,
    out_rdata_width: usize,
    in_wdata_width: Option<usize>,
}

/// Widest port a blueprint may name (bit indices are below this); bounds every allocation a bit
/// range can cause.
pub const MAX_PORT_BITS: usize = 1 << 20;
/// Most bits all external input ports, or all external output ports, of a blueprint may have together.
pub const MAX_EXTERNAL_BITS: usize = 1 << 22;
/// Largest memory address width accepted (2^16 words); larger memories would not fit a cycle anyway.
pub const MAX_ADDR_WIDTH: usize = 16;
/// Largest memory word width accepted.
pub const MAX_DATA_WIDTH: usize = 64;

/// A TOML error on one line: `bad TOML at line L, column C: message` (toml's own text spans
/// several lines and quotes the offending line, which may be megabytes long).
fn toml_error_line(text: &str, e: &toml::de::Error) -> String {
    let first = e.message().lines().next().unwrap_or("").trim();
    let message = vsp_codec::text::cut(first, 200);
    match e.span() {
        Some(span) => {
            let at = span.start.min(text.len());
            let before = text.get(..at).unwrap_or("");
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("bad TOML at line {line}, column {column}: {message}")
        }
        None => format!("bad TOML: {message}"),
    }
}

impl Blueprint {
    /// Loads a blueprint file; `[[file]]` paths are relative to the file's directory.
    pub fn from_path(path: &Path) -> Result<Self, CircuitError> {
        let text = vsp_codec::read_text_bounded(path, vsp_codec::limits::SOURCE, "a blueprint")?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_str_with_base(&text, &base).map_err(|e| match e {
            CircuitError::Blueprint(m) => {
                CircuitError::Blueprint(format!("{}: {m}", path.display()))
            }
            other => other,
        })
    }

    /// Parses blueprint text whose `[[file]]` paths are relative to `base`.
    pub fn from_str_with_base(text: &str, base: &Path) -> Result<Self, CircuitError> {
        Self::from_str_with_resolver(text, |p| {
            let full: PathBuf = base.join(p);
            Ok(vsp_codec::read_text_bounded(
                &full,
                vsp_codec::limits::NETLIST,
                "a Yosys JSON netlist",
            )?)
        })
    }

    /// Parses blueprint text; `resolve(path)` returns the text of each `[[file]]` (for embedded data).
    pub fn from_str_with_resolver(
        text: &str,
        mut resolve: impl FnMut(&str) -> Result<String, CircuitError>,
    ) -> Result<Self, CircuitError> {
        let raw: RawBlueprint =
            toml::from_str(text).map_err(|e| CircuitError::Blueprint(toml_error_line(text, &e)))?;
        let mut names = HashSet::new();
        let mut netlists = Vec::new();
        for f in raw.file {
            check_name(&f.name, &mut names)?;
            if f.ty != "yosys-json" {
                return Err(CircuitError::Blueprint(format!(
                    "[[file]] {}: unknown type {:?} (supported: \"yosys-json\")",
                    f.name, f.ty
                )));
            }
            let text = resolve(&f.path)?;
            let n =
                crate::yosys::parse_yosys_json(&text).map_err(|e| e.in_netlist_file(&f.path))?;
            netlists.push((f.name, n));
        }
        let mut memories = Vec::new();
        for b in raw.builtin {
            check_name(&b.name, &mut names)?;
            let (kind, imp) = match b.ty.as_str() {
                "rom" | "cmux-rom" => (MemKind::Rom, MemImpl::Cmux),
                "mux-rom" => (MemKind::Rom, MemImpl::Mux),
                "ram" | "cmux-ram" => (MemKind::Ram, MemImpl::Cmux),
                "mux-ram" => (MemKind::Ram, MemImpl::Mux),
                other => {
                    return Err(CircuitError::Blueprint(format!(
                        "[[builtin]] {}: unknown type {other:?} (rom, mux-rom, ram, mux-ram)",
                        b.name
                    )))
                }
            };
            if b.in_addr_width == 0 || b.in_addr_width > MAX_ADDR_WIDTH {
                return Err(CircuitError::Blueprint(format!(
                    "[[builtin]] {}: in_addr_width {} must be in 1..={MAX_ADDR_WIDTH}",
                    b.name, b.in_addr_width
                )));
            }
            if b.out_rdata_width == 0 || b.out_rdata_width > MAX_DATA_WIDTH {
                return Err(CircuitError::Blueprint(format!(
                    "[[builtin]] {}: out_rdata_width {} must be in 1..={MAX_DATA_WIDTH}",
                    b.name, b.out_rdata_width
                )));
            }
            match (kind, b.in_wdata_width) {
                (MemKind::Ram, Some(w)) if w != b.out_rdata_width => {
                    return Err(CircuitError::WidthMismatch(format!(
                        "[[builtin]] {}: in_wdata_width {w} must equal out_rdata_width {}",
                        b.name, b.out_rdata_width
                    )))
                }
                (MemKind::Rom, Some(_)) => {
                    return Err(CircuitError::Blueprint(format!(
                        "[[builtin]] {}: a ROM has no in_wdata_width",
                        b.name
                    )))
                }
                _ => {}
            }
            memories.push(MemorySpec {
                name: b.name,
                kind,
                imp,
                addr_width: b.in_addr_width,
                data_width: b.out_rdata_width,
            });
        }
        let mut connections = Vec::new();
        for (dst, src) in raw.connect {
            let src = src.as_str().ok_or_else(|| {
                CircuitError::Blueprint(format!("[connect] {dst:?}: the source must be a string"))
            })?;
            connections.push((PortRef::parse(&dst)?, PortRef::parse(src)?));
        }
        Ok(Blueprint {
            netlists,
            memories,
            connections,
        })
    }

    /// A blueprint around one netlist: every input port `p` is fed by `@p`, every output `q` drives `@q`.
    pub fn single(name: &str, netlist: Netlist) -> Self {
        let mut connections = Vec::new();
        for p in netlist.inputs() {
            connections.push((
                PortRef::Node {
                    node: name.into(),
                    port: p.name.clone(),
                    range: None,
                },
                PortRef::External {
                    name: p.name.clone(),
                    range: None,
                },
            ));
        }
        for p in netlist.outputs() {
            connections.push((
                PortRef::External {
                    name: p.name.clone(),
                    range: None,
                },
                PortRef::Node {
                    node: name.into(),
                    port: p.name.clone(),
                    range: None,
                },
            ));
        }
        Blueprint {
            netlists: vec![(name.to_string(), netlist)],
            memories: Vec::new(),
            connections,
        }
    }
}

fn check_name(name: &str, seen: &mut HashSet<String>) -> Result<(), CircuitError> {
    if name.is_empty() || name.starts_with('@') || name.contains('/') || name.contains('[') {
        return Err(CircuitError::Blueprint(format!(
            "instance name {name:?} must be non-empty without '@', '/' or '['"
        )));
    }
    if !seen.insert(name.to_string()) {
        return Err(CircuitError::Blueprint(format!(
            "instance name {name:?} is used twice"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_port_refs() {
        assert_eq!(
            PortRef::parse("core/io_x[0:15]").unwrap(),
            PortRef::Node {
                node: "core".into(),
                port: "io_x".into(),
                range: Some((0, 15))
            }
        );
        assert_eq!(
            PortRef::parse("@reset").unwrap(),
            PortRef::External {
                name: "reset".into(),
                range: None
            }
        );
        assert_eq!(
            PortRef::parse("@r[3]").unwrap(),
            PortRef::External {
                name: "r".into(),
                range: Some((3, 3))
            }
        );
        assert_eq!(PortRef::parse("1").unwrap(), PortRef::Const(true));
        for bad in ["core", "core/x[3:1]", "core/x[a]", "@", "a/b[1:2", "/x"] {
            assert!(PortRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_bad_builtins() {
        let t =
            "[[builtin]]\ntype = \"flash\"\nname = \"m\"\nin_addr_width = 2\nout_rdata_width = 2\n";
        let e = Blueprint::from_str_with_resolver(t, |_| Ok(String::new())).unwrap_err();
        assert!(e.to_string().contains("unknown type \"flash\""), "{e}");
        let t = "[[builtin]]\ntype = \"ram\"\nname = \"m\"\nin_addr_width = 2\nin_wdata_width = 3\nout_rdata_width = 2\n";
        let e = Blueprint::from_str_with_resolver(t, |_| Ok(String::new())).unwrap_err();
        assert!(matches!(e, CircuitError::WidthMismatch(_)), "{e}");
        let e = Blueprint::from_str_with_resolver("[[file]\n", |_| Ok(String::new())).unwrap_err();
        assert!(e.to_string().contains("bad TOML"), "{e}");
    }
}
