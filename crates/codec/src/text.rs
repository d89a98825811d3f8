//! Text from files echoed in messages: control characters escaped (a file's ESC or BEL never
//! reaches the terminal raw, and a newline never splits a one-line error) and long stretches cut to
//! a short excerpt.

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
