//! Tokens of one logical line of LLVM IR text.

use crate::error::{parse_err, Result};

/// A token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// `%name`.
    Local(String),
    /// `@name`.
    Global(String),
    /// An integer literal.
    Int(i128),
    /// A floating-point literal (only recognised, to be reported).
    Float(String),
    /// A keyword or type name.
    Word(String),
    /// `c"…"` with escapes decoded.
    Bytes(Vec<u8>),
    /// `"…"` (section names, attribute strings).
    Str(String),
    /// Punctuation.
    P(char),
    /// `...`.
    Ellipsis,
    /// `!name` / `!3` metadata.
    Meta(String),
    /// `#3` attribute group.
    Attr(String),
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// Decodes the body of a quoted string (LLVM uses `\XX` hex escapes and `\\`).
fn unescape(raw: &[u8], line: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\' {
            if raw.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
                continue;
            }
            let hex = raw
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => out.push(b),
                None => return parse_err(line, "bad escape in string literal"),
            }
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Splits `s` (one logical line, comments already removed or not) into tokens.
pub fn lex(s: &str, line: usize) -> Result<Vec<Tok>> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let read_quoted = |i: usize| -> Result<(Vec<u8>, usize)> {
        // b[i] == '"'
        let mut j = i + 1;
        while j < b.len() && b[j] != b'"' {
            j += 1;
        }
        if j >= b.len() {
            return parse_err(line, "unterminated string");
        }
        Ok((unescape(&b[i + 1..j], line)?, j + 1))
    };
    let read_ident = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < b.len() && is_ident(b[j] as char) {
            j += 1;
        }
        (s[i..j].to_string(), j)
    };
    while i < b.len() {
        let c = b[i] as char;
        match c {
            ';' => break,
            ' ' | '\t' | '\r' | '\n' => i += 1,
            '%' | '@' => {
                let (name, j) = if b.get(i + 1) == Some(&b'"') {
                    let (v, j) = read_quoted(i + 1)?;
                    (String::from_utf8_lossy(&v).into_owned(), j)
                } else {
                    read_ident(i + 1)
                };
                if name.is_empty() {
                    return parse_err(line, format!("empty name after '{c}'"));
                }
                toks.push(if c == '%' {
                    Tok::Local(name)
                } else {
                    Tok::Global(name)
                });
                i = j;
            }
            '!' | '#' => {
                let (name, j) = read_ident(i + 1);
                toks.push(if c == '!' {
                    Tok::Meta(name)
                } else {
                    Tok::Attr(name)
                });
                i = j;
            }
            '"' => {
                let (v, j) = read_quoted(i)?;
                toks.push(Tok::Str(String::from_utf8_lossy(&v).into_owned()));
                i = j;
            }
            'c' if b.get(i + 1) == Some(&b'"') => {
                let (v, j) = read_quoted(i + 1)?;
                toks.push(Tok::Bytes(v));
                i = j;
            }
            '.' if s[i..].starts_with("...") => {
                toks.push(Tok::Ellipsis);
                i += 3;
            }
            '-' | '0'..='9' => {
                let mut j = i + 1;
                while j < b.len()
                    && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'.' | b'+' | b'-'))
                {
                    if matches!(b[j], b'+' | b'-') && !matches!(b[j - 1], b'e' | b'E') {
                        break;
                    }
                    j += 1;
                }
                let text = &s[i..j];
                match text.parse::<i128>() {
                    Ok(v) => toks.push(Tok::Int(v)),
                    Err(_) if text.starts_with("0x") || text.contains('.') => {
                        toks.push(Tok::Float(text.to_string()))
                    }
                    Err(_) => return parse_err(line, format!("bad number '{text}'")),
                }
                i = j;
            }
            '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | '=' | '*' | ':' | '|' => {
                toks.push(Tok::P(c));
                i += 1;
            }
            _ if c.is_ascii_alphabetic() || c == '_' || c == '.' || c == '$' => {
                let (w, j) = read_ident(i);
                toks.push(Tok::Word(w));
                i = j;
            }
            _ => return parse_err(line, format!("unexpected character '{c}'")),
        }
    }
    Ok(toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_an_instruction_with_metadata() {
        let t = lex("  %5 = load i8, i8* %4, align 1, !tbaa !6 ; c", 3).unwrap();
        assert_eq!(t[0], Tok::Local("5".into()));
        assert_eq!(t[3], Tok::Word("i8".into()));
        assert!(t.contains(&Tok::Meta("tbaa".into())));
        assert_eq!(t.last(), Some(&Tok::Meta("6".into())));
    }

    #[test]
    fn decodes_c_strings_and_negative_numbers() {
        let t = lex(r#"c"hi\0A\00" -48 @"a b""#, 1).unwrap();
        assert_eq!(t[0], Tok::Bytes(b"hi\n\0".to_vec()));
        assert_eq!(t[1], Tok::Int(-48));
        assert_eq!(t[2], Tok::Global("a b".into()));
        assert!(lex("c\"abc", 1).is_err());
    }
}
