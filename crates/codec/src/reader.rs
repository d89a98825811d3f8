//! A bounds-checked little-endian reader: every read checks the bytes that remain, every count read
//! from a file is checked against a limit and against the bytes that remain before anything is
//! allocated, and all offset arithmetic is checked.

use crate::Error;

/// Reads fields from a byte slice; it never panics and never allocates from an unchecked length.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The next `n` bytes (`what` names the field in the error).
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| Error::Truncated(what.to_string()))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Error> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    /// A byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self, what: &str) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A `u8` that must be 0 or 1.
    pub fn bool(&mut self, what: &str) -> Result<bool, Error> {
        match self.u8(what)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(Error::Invalid(format!("{what} is {v}, must be 0 or 1"))),
        }
    }

    /// A `u64` count of at most `max` items, each at least `min_width` bytes wide, that must fit in
    /// the bytes that remain: the only safe size for a `Vec::with_capacity` of decoded items.
    pub fn count(&mut self, min_width: usize, max: usize, what: &str) -> Result<usize, Error> {
        let n = self.u64(what)?;
        self.check_count(n, min_width, max, what)
    }

    /// Checks a count already read (e.g. a narrower field) as [`Reader::count`] does.
    pub fn check_count(
        &self,
        n: u64,
        min_width: usize,
        max: usize,
        what: &str,
    ) -> Result<usize, Error> {
        let fits = match min_width {
            0 => max as u64,
            w => (self.remaining() / w) as u64,
        };
        let limit = fits.min(max as u64);
        if n > limit {
            return Err(Error::TooLong {
                what: what.to_string(),
                found: n,
                max: limit,
            });
        }
        Ok(n as usize)
    }

    /// A `u64` count that must equal `expected` (a size the parameters fix), checked against the
    /// bytes that remain at `width` bytes an item.
    pub fn exact_count(&mut self, width: usize, expected: usize, what: &str) -> Result<(), Error> {
        let n = self.u64(what)?;
        if n != expected as u64 {
            return Err(Error::Invalid(format!(
                "{what} has {n} entries, the parameters need {expected}"
            )));
        }
        self.check_count(n, width, usize::MAX, what)?;
        Ok(())
    }

    /// A `u64` length (at most `max`) followed by that many bytes.
    pub fn blob(&mut self, max: usize, what: &str) -> Result<&'a [u8], Error> {
        let n = self.count(1, max, what)?;
        self.take(n, what)
    }

    /// A `u64` length (at most `max`) followed by that many bytes of UTF-8.
    pub fn str(&mut self, max: usize, what: &str) -> Result<&'a str, Error> {
        std::str::from_utf8(self.blob(max, what)?)
            .map_err(|_| Error::Invalid(format!("{what} is not UTF-8")))
    }

    /// `n` little-endian `u32`s (no count prefix); `n` is checked against the bytes that remain.
    pub fn u32_words(&mut self, n: usize, what: &str) -> Result<Vec<u32>, Error> {
        self.words(n, what, u32::from_le_bytes)
    }

    /// `n` little-endian `u64`s (no count prefix); `n` is checked against the bytes that remain.
    pub fn u64_words(&mut self, n: usize, what: &str) -> Result<Vec<u64>, Error> {
        self.words(n, what, u64::from_le_bytes)
    }

    /// `n` words of `W` bytes each, decoded by `word`; `n` is checked against the bytes that remain.
    fn words<T, const W: usize>(
        &mut self,
        n: usize,
        what: &str,
        word: fn([u8; W]) -> T,
    ) -> Result<Vec<T>, Error> {
        let len = n
            .checked_mul(W)
            .ok_or_else(|| Error::Truncated(what.to_string()))?;
        Ok(self
            .take(len, what)?
            .chunks_exact(W)
            .map(|c| {
                let mut a = [0u8; W];
                a.copy_from_slice(c);
                word(a)
            })
            .collect())
    }

    /// A `u64` count that must equal `expected`, then that many `u32`s.
    pub fn u32s(&mut self, expected: usize, what: &str) -> Result<Vec<u32>, Error> {
        self.exact_count(4, expected, what)?;
        self.u32_words(expected, what)
    }

    /// A `u64` count that must equal `expected`, then that many `u64`s.
    pub fn u64s(&mut self, expected: usize, what: &str) -> Result<Vec<u64>, Error> {
        self.exact_count(8, expected, what)?;
        self.u64_words(expected, what)
    }

    /// Fails unless every byte was read.
    pub fn end(&self) -> Result<(), Error> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(Error::Trailing(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Writer;

    #[test]
    fn reads_what_the_writer_wrote() {
        let mut w = Writer::new();
        w.u8(7);
        w.u16(0x1234);
        w.u32(0xdead_beef);
        w.u64(u64::MAX - 3);
        w.str("name");
        w.u32s(&[1, 2, 3]);
        w.u64s(&[9, 8]);
        w.bool(true);
        let b = w.into_bytes();
        let mut r = Reader::new(&b);
        assert_eq!(r.u8("a").unwrap(), 7);
        assert_eq!(r.u16("b").unwrap(), 0x1234);
        assert_eq!(r.u32("c").unwrap(), 0xdead_beef);
        assert_eq!(r.u64("d").unwrap(), u64::MAX - 3);
        assert_eq!(r.str(16, "e").unwrap(), "name");
        assert_eq!(r.u32s(3, "f").unwrap(), vec![1, 2, 3]);
        assert_eq!(r.u64s(2, "g").unwrap(), vec![9, 8]);
        assert!(r.bool("h").unwrap());
        r.end().unwrap();
    }

    #[test]
    fn a_huge_count_is_refused_before_allocating() {
        let mut w = Writer::new();
        w.u64(u64::MAX);
        w.u32(1);
        let b = w.into_bytes();
        let e = Reader::new(&b).count(4, usize::MAX, "cells").unwrap_err();
        assert!(
            matches!(e, Error::TooLong { found, max: 1, .. } if found == u64::MAX),
            "{e}"
        );
        assert!(Reader::new(&b).u32s(1, "words").is_err());
        assert!(Reader::new(&b).blob(usize::MAX, "blob").is_err());
        let e = Reader::new(&b).u32_words(usize::MAX, "words").unwrap_err();
        assert!(e.to_string().contains("ends inside the words"), "{e}");
    }

    #[test]
    fn truncation_and_trailing_bytes_are_named() {
        let b = [1u8, 2, 3];
        let e = Reader::new(&b).u32("flags").unwrap_err();
        assert_eq!(
            e.to_string(),
            "file is truncated or corrupt: it ends inside the flags"
        );
        let mut r = Reader::new(&b);
        r.u8("x").unwrap();
        assert!(matches!(r.end(), Err(Error::Trailing(2))));
        assert!(Reader::new(&[2u8]).bool("flag").is_err());
    }
}
