//! Loading a design: a blueprint (TOML, `docs/blueprint.md`) or a bare Yosys JSON netlist
//! (`docs/yosys.md`), whose ports become the circuit's external ports of the same name.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use vsp_circuit::{Blueprint, Circuit};

use crate::error::{Result, ResultExt};

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
    // A `[connect]` line: destination = source.
    let mut connect = |dst: String, src: String| {
        let _ = writeln!(bp, "{} = {}", quote(&dst), quote(&src));
    };
    for p in n.inputs().iter().filter(|p| p.width() > 0) {
        connect(format!("top/{}", p.name), format!("@{}", p.name));
    }
    for p in n.outputs().iter().filter(|p| p.width() > 0) {
        connect(format!("@{}", p.name), format!("top/{}", p.name));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_are_quoted_for_toml() {
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
