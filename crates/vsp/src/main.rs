//! `vsp`: the Virtual Secure Platform command line (being built).

mod container;

fn main() -> anyhow::Result<()> {
    anyhow::bail!("vsp: no commands yet")
}
