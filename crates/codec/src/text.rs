//! Text from files echoed in messages: control characters escaped (a file's ESC or BEL never
//! reaches the terminal raw, and a newline never splits a one-line error) and long stretches cut to
//! a short excerpt; durations and sizes as the commands print them.

/// `s` with every control character escaped as Rust writes it (`\n`, `\t`, `\u{1b}`).
pub fn escape_control(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Longest excerpt of input a message quotes, in characters.
pub const EXCERPT_CHARS: usize = 60;

/// `s` escaped, and cut to `max` characters with `…` and the count of characters left out.
pub fn cut(s: &str, max: usize) -> String {
    let escaped = escape_control(s);
    let n = escaped.chars().count();
    if n <= max {
        return escaped;
    }
    let head: String = escaped.chars().take(max).collect();
    format!("{head}… ({} more characters)", n - max)
}

/// `s` as a short excerpt: escaped and cut to [`EXCERPT_CHARS`].
pub fn excerpt(s: &str) -> String {
    cut(s, EXCERPT_CHARS)
}

/// `93 s` → `1m33s`.
pub fn fmt_secs(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `12345678` → `11.8 MiB`.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(
            escape_control("a\u{1b}[2Jb\u{7}\n"),
            "a\\u{1b}[2Jb\\u{7}\\n"
        );
        assert_eq!(excerpt("short"), "short");
        let long = "x".repeat(100);
        assert_eq!(
            excerpt(&long),
            format!("{}… (40 more characters)", "x".repeat(60))
        );
        assert_eq!(cut("ééé", 2), "éé… (1 more characters)");
    }
}
