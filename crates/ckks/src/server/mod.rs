//! The server side (needs `std`): keys, decryption, decoding, evaluation.
