//! The little-endian writer matching [`crate::Reader`].

/// Appends fields to a byte vector.
#[derive(Clone, Debug, Default)]
pub struct Writer(Vec<u8>);

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Writer(Vec::new())
    }
    /// An empty writer with room for `n` bytes.
    pub fn with_capacity(n: usize) -> Self {
        Writer(Vec::with_capacity(n))
    }
    /// Raw bytes, no length prefix.
    pub fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// A `bool` as one byte (0 or 1).
    pub fn bool(&mut self, v: bool) {
        self.0.push(u8::from(v));
    }
    /// A little-endian `u16`.
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A little-endian `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A count or length as a `u64`.
    pub fn count(&mut self, n: usize) {
        self.u64(n as u64);
    }
    /// A `u64` length and the bytes.
    pub fn blob(&mut self, b: &[u8]) {
        self.count(b.len());
        self.bytes(b);
    }
    /// A `u64` length and the UTF-8 bytes.
    pub fn str(&mut self, s: &str) {
        self.blob(s.as_bytes());
    }
    /// `u32` words, no count.
    pub fn u32_words(&mut self, v: &[u32]) {
        self.0.reserve(4 * v.len());
        v.iter().for_each(|x| self.u32(*x));
    }
    /// `u64` words, no count.
    pub fn u64_words(&mut self, v: &[u64]) {
        self.0.reserve(8 * v.len());
        v.iter().for_each(|x| self.u64(*x));
    }
    /// A `u64` count and the `u32` words.
    pub fn u32s(&mut self, v: &[u32]) {
        self.count(v.len());
        self.u32_words(v);
    }
    /// A `u64` count and the `u64` words.
    pub fn u64s(&mut self, v: &[u64]) {
        self.count(v.len());
        self.u64_words(v);
    }
    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The underlying vector, for encoders that append to a `Vec<u8>`.
    pub fn vec_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
    /// The bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}
