//! Tokenizer for one line of assembly. Columns are 1-based character positions so that error
//! messages point where an editor would.

use super::AsmErrorKind;

/// A token with the column it starts at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Num(i64),
    Str(Vec<u8>),
    Comma,
    Colon,
    LParen,
    RParen,
    Plus,
    Minus,
    Star,
    Slash,
    Tilde,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    Percent,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '.' || c == '$'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'
}

/// Splits a line into tokens, dropping comments (`#`, `;` or `//` to end of line).
pub(crate) fn tokenize(line: &str) -> Result<Vec<Token>, (u32, AsmErrorKind)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = (i + 1) as u32;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' || c == ';' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            break;
        }
        let simple = match c {
            ',' => Some(Tok::Comma),
            ':' => Some(Tok::Colon),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '+' => Some(Tok::Plus),
            '-' => Some(Tok::Minus),
            '*' => Some(Tok::Star),
            '/' => Some(Tok::Slash),
            '~' => Some(Tok::Tilde),
            '&' => Some(Tok::Amp),
            '|' => Some(Tok::Pipe),
            '^' => Some(Tok::Caret),
            '%' => Some(Tok::Percent),
            _ => None,
        };
        if let Some(t) = simple {
            out.push(Token { tok: t, col });
            i += 1;
            continue;
        }
        if (c == '<' || c == '>') && chars.get(i + 1) == Some(&c) {
            out.push(Token {
                tok: if c == '<' { Tok::Shl } else { Tok::Shr },
                col,
            });
            i += 2;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|&&c| c != '_').collect();
            let lower = text.to_ascii_lowercase();
            let parsed = if let Some(h) = lower.strip_prefix("0x") {
                i64::from_str_radix(h, 16)
            } else if let Some(b) = lower.strip_prefix("0b") {
                i64::from_str_radix(b, 2)
            } else if let Some(o) = lower.strip_prefix("0o") {
                i64::from_str_radix(o, 8)
            } else {
                lower.parse::<i64>()
            };
            let v = parsed.map_err(|_| {
                (
                    col,
                    AsmErrorKind::Syntax(format!("malformed number `{text}`")),
                )
            })?;
            if v > 0xFFFF_FFFF {
                return Err((
                    col,
                    AsmErrorKind::Syntax(format!("number `{text}` is too large")),
                ));
            }
            out.push(Token {
                tok: Tok::Num(v),
                col,
            });
            continue;
        }
        if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                col,
            });
            continue;
        }
        if c == '\'' {
            let (bytes, next) = quoted(&chars, i, '\'')?;
            if bytes.len() != 1 {
                return Err((
                    col,
                    AsmErrorKind::Syntax("character literal must hold exactly one byte".into()),
                ));
            }
            out.push(Token {
                tok: Tok::Num(i64::from(bytes[0])),
                col,
            });
            i = next;
            continue;
        }
        if c == '"' {
            let (bytes, next) = quoted(&chars, i, '"')?;
            out.push(Token {
                tok: Tok::Str(bytes),
                col,
            });
            i = next;
            continue;
        }
        return Err((
            col,
            AsmErrorKind::Syntax(format!("unexpected character `{c}`")),
        ));
    }
    Ok(out)
}

/// Reads a quoted string or character starting at `chars[start]` (the quote); returns the bytes
/// and the index after the closing quote.
fn quoted(chars: &[char], start: usize, q: char) -> Result<(Vec<u8>, usize), (u32, AsmErrorKind)> {
    let mut i = start + 1;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        let col = (i + 1) as u32;
        if c == q {
            return Ok((out, i + 1));
        }
        if c == '\\' {
            let e = *chars
                .get(i + 1)
                .ok_or((col, AsmErrorKind::Syntax("unterminated escape".into())))?;
            i += 2;
            let b = match e {
                'n' => b'\n',
                't' => b'\t',
                'r' => b'\r',
                '0' => 0,
                '\\' => b'\\',
                '\'' => b'\'',
                '"' => b'"',
                'x' => {
                    let hex: String = chars[i..]
                        .iter()
                        .take(2)
                        .take_while(|c| c.is_ascii_hexdigit())
                        .collect();
                    if hex.is_empty() {
                        return Err((col, AsmErrorKind::Syntax("`\\x` needs hex digits".into())));
                    }
                    i += hex.len();
                    u8::from_str_radix(&hex, 16)
                        .map_err(|_| (col, AsmErrorKind::Syntax("bad `\\x` escape".into())))?
                }
                other => {
                    return Err((
                        col,
                        AsmErrorKind::Syntax(format!("unknown escape `\\{other}`")),
                    ))
                }
            };
            out.push(b);
            continue;
        }
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        i += 1;
    }
    Err((
        (start + 1) as u32,
        AsmErrorKind::Syntax(format!(
            "unterminated {} literal",
            if q == '"' { "string" } else { "character" }
        )),
    ))
}
