//! `vsp`: the Virtual Secure Platform command line (being built).

fn main() -> anyhow::Result<()> {
    anyhow::bail!("vsp: no commands yet")
}
