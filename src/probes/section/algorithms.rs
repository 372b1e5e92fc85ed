//! The crypto the section family runs (seed 004's tcrypt table): each
//! algorithm from the crate that is fastest at it here, and which
//! instruction set that crate picks on this CPU.
//!
//! The crates choose at run time; none reports its choice, so
//! `implementation` restates their dispatch rules (ring 0.17.14, sha1
//! 0.11, crc32c 0.6) over the CPU's features. SHA-1 comes from RustCrypto
//! because ring's is portable code; SHA-512 from ring, whose AVX code beat
//! RustCrypto's here (334 against 266 MB/s at 1 MiB).

use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use ring::digest;
use sha1::Digest as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Sha1,
    Sha256,
    Sha512,
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    Crc32c,
}

pub const ALGORITHMS: [Algorithm; 7] = [
    Algorithm::Sha1,
    Algorithm::Sha256,
    Algorithm::Sha512,
    Algorithm::Aes128Gcm,
    Algorithm::Aes256Gcm,
    Algorithm::ChaCha20Poly1305,
    Algorithm::Crc32c,
];

/// Whether the CPU has every feature named; a misspelt name does not
/// compile, where a lookup by string would quietly say "absent".
macro_rules! has {
    ($($feature:tt),+) => { $(std::arch::is_x86_feature_detected!($feature))&&+ };
}

/// ring takes some paths only on Intel CPUs (pre-Zen AMD microcoded the
/// shifts they use).
fn is_intel() -> bool {
    static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INTEL.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .map(|info| info.contains("GenuineIntel"))
            .unwrap_or(false)
    })
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
            Algorithm::Aes128Gcm => "aes-128-gcm",
            Algorithm::Aes256Gcm => "aes-256-gcm",
            Algorithm::ChaCha20Poly1305 => "chacha20-poly1305",
            Algorithm::Crc32c => "crc32c",
        }
    }

    /// Whether it encrypts, and so has a decrypt direction too.
    pub fn is_aead(self) -> bool {
        matches!(
            self,
            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm | Algorithm::ChaCha20Poly1305
        )
    }

    /// The crate and the code path it takes on this CPU.
    pub fn implementation(self) -> String {
        let path = match self {
            Algorithm::Sha1 if has!("sha", "ssse3", "sse4.1") => "SHA-NI",
            Algorithm::Sha1 => "portable",
            Algorithm::Sha256 if has!("sha", "ssse3") => "SHA-NI",
            Algorithm::Sha256 if has!("avx") && is_intel() => "AVX",
            Algorithm::Sha256 if has!("ssse3") => "SSSE3",
            Algorithm::Sha256 => "portable",
            Algorithm::Sha512 if has!("avx") && is_intel() => "AVX (no SHA-512 extension code)",
            Algorithm::Sha512 => "portable",
            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => {
                if !has!("aes", "pclmulqdq", "ssse3") {
                    "no AES-NI: bitsliced or portable"
                } else if has!("vaes", "vpclmulqdq", "avx2") {
                    "VAES+VPCLMULQDQ (AVX2)"
                } else if has!("avx", "movbe") {
                    "AES-NI+PCLMULQDQ, AVX stitched"
                } else {
                    "AES-NI+PCLMULQDQ"
                }
            }
            Algorithm::ChaCha20Poly1305 if has!("sse4.1", "avx2", "bmi2") => "AVX2",
            Algorithm::ChaCha20Poly1305 if has!("sse4.1") => "SSE4.1",
            Algorithm::ChaCha20Poly1305 => "portable",
            Algorithm::Crc32c if has!("sse4.2") => "SSE4.2 crc32",
            Algorithm::Crc32c => "portable table",
        };
        let krate = match self {
            Algorithm::Sha1 => "sha1 0.11",
            Algorithm::Crc32c => "crc32c 0.6",
            _ => "ring 0.17",
        };
        format!("{krate}, {path}")
    }

    fn aead(self) -> Option<&'static aead::Algorithm> {
        match self {
            Algorithm::Aes128Gcm => Some(&aead::AES_128_GCM),
            Algorithm::Aes256Gcm => Some(&aead::AES_256_GCM),
            Algorithm::ChaCha20Poly1305 => Some(&aead::CHACHA20_POLY1305),
            _ => None,
        }
    }

    /// A key for an AEAD algorithm, None for the others. The key's bytes
    /// do not change the cost, so they are fixed.
    pub fn key(self) -> Option<LessSafeKey> {
        let algorithm = self.aead()?;
        let bytes = vec![0x42u8; algorithm.key_len()];
        UnboundKey::new(algorithm, &bytes)
            .ok()
            .map(LessSafeKey::new)
    }
}

/// An incremental digest: what a chunked section feeds chunk by chunk.
pub enum Hasher {
    Sha1(sha1::Sha1),
    Ring(digest::Context),
    Crc32c(u32),
}

impl Hasher {
    /// None for the AEAD algorithms, which are not digests.
    pub fn new(algorithm: Algorithm) -> Option<Hasher> {
        Some(match algorithm {
            Algorithm::Sha1 => Hasher::Sha1(sha1::Sha1::new()),
            Algorithm::Sha256 => Hasher::Ring(digest::Context::new(&digest::SHA256)),
            Algorithm::Sha512 => Hasher::Ring(digest::Context::new(&digest::SHA512)),
            Algorithm::Crc32c => Hasher::Crc32c(0),
            _ => return None,
        })
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            Hasher::Sha1(h) => h.update(data),
            Hasher::Ring(h) => h.update(data),
            Hasher::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
        }
    }

    pub fn finish(self) -> Output {
        match self {
            Hasher::Sha1(h) => Output::of(&h.finalize()),
            Hasher::Ring(h) => Output::of(h.finish().as_ref()),
            Hasher::Crc32c(crc) => Output::of(&crc.to_be_bytes()),
        }
    }
}

/// A digest, held without touching the heap: timed loops make millions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Output {
    bytes: [u8; 64],
    len: usize,
}

impl Output {
    fn of(digest: &[u8]) -> Output {
        let mut bytes = [0u8; 64];
        bytes[..digest.len()].copy_from_slice(digest);
        Output {
            bytes,
            len: digest.len(),
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice()
            .iter()
            .try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The digest of `data` in one call, as an unchunked caller would make it;
/// None for the AEAD algorithms.
pub fn digest_once(algorithm: Algorithm, data: &[u8]) -> Option<Output> {
    Some(match algorithm {
        Algorithm::Sha1 => Output::of(&sha1::Sha1::digest(data)),
        Algorithm::Sha256 => Output::of(digest::digest(&digest::SHA256, data).as_ref()),
        Algorithm::Sha512 => Output::of(digest::digest(&digest::SHA512, data).as_ref()),
        Algorithm::Crc32c => Output::of(&crc32c::crc32c(data).to_be_bytes()),
        _ => return None,
    })
}

/// The fixed nonce every seal and open uses. Reusing a nonce is fatal for
/// real secrecy and irrelevant to cost; nothing sealed here is secret.
fn nonce() -> Nonce {
    Nonce::assume_unique_for_key([7u8; aead::NONCE_LEN])
}

/// Encrypts `buffer` in place and returns the tag.
pub fn seal(key: &LessSafeKey, buffer: &mut [u8]) -> Result<aead::Tag, String> {
    key.seal_in_place_separate_tag(nonce(), Aad::empty(), buffer)
        .map_err(|_| "seal failed".to_string())
}

/// Decrypts and authenticates `sealed` (ciphertext followed by its tag) in
/// place.
pub fn open(key: &LessSafeKey, sealed: &mut [u8]) -> Result<(), String> {
    key.open_in_place(nonce(), Aad::empty(), sealed)
        .map(drop)
        .map_err(|_| "open failed: the tag did not match".to_string())
}
