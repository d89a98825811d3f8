//! A design's statistics (`vsp circuit stats`): gates, depth, bootstraps per cycle, and what an
//! encrypted cycle costs with select-once MUXes at the default parameters.

use std::collections::BTreeMap;

use vsp_circuit::{Circuit, LeveledParams, MuxPlan};

/// The statistics of `c` as JSON (an object; `vsp circuit stats` prints it as is or one line a key).
pub fn stats_json(c: &Circuit) -> serde_json::Value {
    let s = c.stats();
    let gates: BTreeMap<String, u64> = vsp_circuit::GateKind::ALL
        .iter()
        .zip(s.gates.iter())
        .map(|(k, n)| (format!("{k:?}"), *n))
        .collect();
    let memories: Vec<String> = c
        .memories()
        .iter()
        .map(|m| {
            format!(
                "{} ({:?} {:?}, {}x{} bits)",
                m.spec.name,
                m.spec.imp,
                m.spec.kind,
                1u64 << m.spec.addr_width,
                m.spec.data_width
            )
        })
        .collect();
    serde_json::json!({
        "gates": gates,
        "not": s.not,
        "mux": s.mux,
        "dff": s.dff,
        "memories": memories,
        "critical_path_bootstraps": s.critical_path,
        "bootstraps_per_cycle": s.bootstraps_per_cycle,
        "encrypted_per_cycle": encrypted_plan_json(c),
    })
}

/// Statistics (from [`stats_json`]) as `vsp circuit stats` prints them without `--json`: one line a
/// key, the key in a column of 26.
pub fn stats_text(stats: &serde_json::Value) -> String {
    let keys = stats.as_object().into_iter().flatten();
    keys.map(|(k, v)| format!("{k:<26} {v}\n")).collect()
}

/// What an encrypted cycle costs with select-once MUXes at the default parameters (memories aside).
fn encrypted_plan_json(c: &Circuit) -> serde_json::Value {
    let Some(lp) = LeveledParams::for_params(&vsp_tfhe::Params::default_128()) else {
        return serde_json::Value::Null;
    };
    let k = MuxPlan::new(c, &lp).counts();
    serde_json::json!({
        "gate_bootstraps": k.bootstraps().round() as u64,
        "circuit_bootstraps": k.circuit_bootstraps,
        "cmuxes": k.cmuxes,
        "mux_gates": k.gate_muxes,
        "lifts": k.lifts,
        "carried_flip_flops": k.carried,
        "refreshes": k.refreshes,
        "key_switches": k.key_switches,
        "bootstrap_equivalents": (k.cost * 10.0).round() / 10.0,
        "log2_failure_per_cycle": (k.log2_failure * 10.0).round() / 10.0,
    })
}

#[cfg(test)]
mod tests {
    /// One line a key, in the object's order; anything but an object prints nothing.
    #[test]
    fn stats_print_one_line_a_key() {
        let v = serde_json::json!({"dff": 3, "gates": {"AND": 2}, "memories": ["rom"]});
        let want = format!(
            "{:<26} 3\n{:<26} {{\"AND\":2}}\n{:<26} [\"rom\"]\n",
            "dff", "gates", "memories"
        );
        assert_eq!(super::stats_text(&v), want);
        assert_eq!(super::stats_text(&serde_json::json!(7)), "");
    }
}
