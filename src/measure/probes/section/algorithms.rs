//! The crypto the section family runs (seed 004's tcrypt table): each
//! algorithm from the system's OpenSSL, the libcrypto a TLS server on this
//! machine runs, except where ring is the faster library, and which
//! instruction set that library picks on this CPU.
//!
//! Each algorithm comes from the library that ran it faster at 1 MiB
//! against `openssl speed -evp` (bench/compare-crypto.sh; the figures:
//! docs/why-the-code-is-so.md, "Each cipher from the faster library"):
//! AES-GCM from ring, the rest from OpenSSL; every row names its library.
//! CRC-32C has no OpenSSL counterpart.
//!
//! Neither library reports which path it takes; `implementation` restates
//! ring 0.17's dispatch rules over the CPU's features, and for OpenSSL
//! names the extensions its x86-64 code uses when present.

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::md::{Md, MdRef};
use openssl::md_ctx::MdCtx;
use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use std::cell::RefCell;
use std::sync::OnceLock;

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

/// The library whose code a row times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    OpenSsl,
    Ring,
    Crc32c,
}

impl Library {
    /// The name and version, as a row states it.
    pub fn name(self) -> String {
        match self {
            // "OpenSSL 3.0.19 27 Jan 2026": the name and the number.
            Library::OpenSsl => openssl::version::version()
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" "),
            Library::Ring => "ring 0.17".to_string(),
            Library::Crc32c => "crc32c 0.6".to_string(),
        }
    }
}

/// Whether the CPU has every feature named; a misspelt name does not
/// compile, where a lookup by string would quietly say "absent".
macro_rules! has {
    ($($feature:tt),+) => { $(std::arch::is_x86_feature_detected!($feature))&&+ };
}

/// The length of every AEAD tag here.
pub const TAG_LEN: usize = 16;

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

    /// The library its rows time: the faster one here (see the module's
    /// comment for the measurements behind the choice).
    pub fn library(self) -> Library {
        match self {
            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => Library::Ring,
            Algorithm::Crc32c => Library::Crc32c,
            _ => Library::OpenSsl,
        }
    }

    /// The library and the code path it takes on this CPU.
    pub fn implementation(self) -> String {
        let path = match self {
            Algorithm::Sha1 | Algorithm::Sha256 if has!("sha", "ssse3") => "SHA-NI",
            Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512
                if has!("avx2", "bmi1", "bmi2") =>
            {
                "AVX2"
            }
            Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512 if has!("avx") => "AVX",
            Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512 if has!("ssse3") => "SSSE3",
            Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512 => "portable",
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
            Algorithm::ChaCha20Poly1305 if has!("avx512f") => "AVX-512",
            Algorithm::ChaCha20Poly1305 if has!("avx2") => "AVX2",
            Algorithm::ChaCha20Poly1305 if has!("ssse3") => "SSSE3",
            Algorithm::ChaCha20Poly1305 => "portable",
            Algorithm::Crc32c if has!("sse4.2") => "SSE4.2 crc32",
            Algorithm::Crc32c => "portable table",
        };
        format!("{}, {path}", self.library().name())
    }

    /// OpenSSL's name for it; None for CRC-32C, which OpenSSL lacks.
    fn openssl_name(self) -> Option<&'static str> {
        Some(match self {
            Algorithm::Sha1 => "SHA1",
            Algorithm::Sha256 => "SHA256",
            Algorithm::Sha512 => "SHA512",
            Algorithm::Aes128Gcm => "AES-128-GCM",
            Algorithm::Aes256Gcm => "AES-256-GCM",
            Algorithm::ChaCha20Poly1305 => "ChaCha20-Poly1305",
            Algorithm::Crc32c => return None,
        })
    }

    /// OpenSSL's digest, fetched once: an implicit fetch on every call
    /// (what the legacy `EVP_sha256()` handles cost in OpenSSL 3) would be
    /// timed with each small buffer, and `openssl speed` fetches once too.
    fn digest(self) -> Option<&'static MdRef> {
        static FETCHED: [OnceLock<Option<Md>>; ALGORITHMS.len()] =
            [const { OnceLock::new() }; ALGORITHMS.len()];
        let name = self.openssl_name().filter(|_| !self.is_aead())?;
        FETCHED[self as usize]
            .get_or_init(|| Md::fetch(None, name, None).ok())
            .as_deref()
    }

    /// OpenSSL's cipher for an AEAD algorithm, fetched once.
    fn cipher(self) -> Option<&'static CipherRef> {
        static FETCHED: [OnceLock<Option<Cipher>>; ALGORITHMS.len()] =
            [const { OnceLock::new() }; ALGORITHMS.len()];
        let name = self.openssl_name().filter(|_| self.is_aead())?;
        FETCHED[self as usize]
            .get_or_init(|| Cipher::fetch(None, name, None).ok())
            .as_deref()
    }

    fn ring_aead(self) -> Option<&'static aead::Algorithm> {
        match self {
            Algorithm::Aes128Gcm => Some(&aead::AES_128_GCM),
            Algorithm::Aes256Gcm => Some(&aead::AES_256_GCM),
            Algorithm::ChaCha20Poly1305 => Some(&aead::CHACHA20_POLY1305),
            _ => None,
        }
    }

    /// A key for an AEAD algorithm in the library its rows time; None for
    /// the others.
    pub fn key(self) -> Option<Key> {
        self.key_in(self.library())
    }

    /// A key in a given library (the tests check both libraries agree).
    /// The key's bytes do not change the cost, so they are fixed.
    pub fn key_in(self, library: Library) -> Option<Key> {
        let bytes = [0x42u8; 32];
        match library {
            Library::Ring => {
                let algorithm = self.ring_aead()?;
                let key = UnboundKey::new(algorithm, &bytes[..algorithm.key_len()]).ok()?;
                Some(Key::Ring(Box::new(LessSafeKey::new(key))))
            }
            Library::OpenSsl => {
                let cipher = self.cipher()?;
                let key = &bytes[..cipher.key_length()];
                let context = |encrypt: bool| -> Option<RefCell<CipherCtx>> {
                    let mut ctx = CipherCtx::new().ok()?;
                    let made = if encrypt {
                        ctx.encrypt_init(Some(cipher), Some(key), Some(&NONCE))
                    } else {
                        ctx.decrypt_init(Some(cipher), Some(key), Some(&NONCE))
                    };
                    made.ok()?;
                    Some(RefCell::new(ctx))
                };
                Some(Key::OpenSsl {
                    seal: context(true)?,
                    open: context(false)?,
                })
            }
            Library::Crc32c => None,
        }
    }
}

/// An AEAD key with what its library needs to seal and open again and
/// again: OpenSSL's two contexts are set up once and only given the nonce
/// afresh per buffer, as `openssl speed` does.
pub enum Key {
    Ring(Box<LessSafeKey>),
    OpenSsl {
        seal: RefCell<CipherCtx>,
        open: RefCell<CipherCtx>,
    },
}

/// An incremental digest: what a chunked section feeds chunk by chunk.
pub enum Hasher {
    OpenSsl(MdCtx, usize),
    Crc32c(u32),
}

impl Hasher {
    /// None for the AEAD algorithms, which are not digests.
    pub fn new(algorithm: Algorithm) -> Option<Hasher> {
        if algorithm == Algorithm::Crc32c {
            return Some(Hasher::Crc32c(0));
        }
        let digest = algorithm.digest()?;
        let mut ctx = MdCtx::new().ok()?;
        ctx.digest_init(digest).ok()?;
        Some(Hasher::OpenSsl(ctx, digest.size()))
    }

    pub fn update(&mut self, data: &[u8]) {
        match self {
            // Updating an initialised context with a buffer cannot fail.
            Hasher::OpenSsl(ctx, _) => ctx.digest_update(data).expect("digest update"),
            Hasher::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
        }
    }

    pub fn finish(self) -> Output {
        match self {
            Hasher::OpenSsl(mut ctx, size) => {
                let mut bytes = [0u8; 64];
                // Finishing an initialised context cannot fail.
                ctx.digest_final(&mut bytes[..size]).expect("digest final");
                Output { bytes, len: size }
            }
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
    let mut hasher = Hasher::new(algorithm)?;
    hasher.update(data);
    Some(hasher.finish())
}

/// The fixed nonce every seal and open uses. Reusing a nonce is fatal for
/// real secrecy and irrelevant to cost; nothing sealed here is secret.
const NONCE: [u8; aead::NONCE_LEN] = [7u8; aead::NONCE_LEN];

/// Encrypts `buffer` in place and returns the tag.
pub fn seal(key: &Key, buffer: &mut [u8]) -> Result<[u8; TAG_LEN], String> {
    fn failed<E>(_: E) -> String {
        "seal failed".to_string()
    }
    match key {
        Key::Ring(key) => {
            let nonce = Nonce::assume_unique_for_key(NONCE);
            let tag = key
                .seal_in_place_separate_tag(nonce, Aad::empty(), buffer)
                .map_err(failed)?;
            tag.as_ref()
                .try_into()
                .map_err(|_| "a tag of another length".to_string())
        }
        Key::OpenSsl { seal, .. } => {
            let mut ctx = seal.borrow_mut();
            ctx.encrypt_init(None, None, Some(&NONCE)).map_err(failed)?;
            let len = buffer.len();
            ctx.cipher_update_inplace(buffer, len).map_err(failed)?;
            ctx.cipher_final(&mut []).map_err(failed)?;
            let mut tag = [0u8; TAG_LEN];
            ctx.tag(&mut tag).map_err(failed)?;
            Ok(tag)
        }
    }
}

/// Decrypts and authenticates `sealed` (ciphertext followed by its tag) in
/// place.
pub fn open(key: &Key, sealed: &mut [u8]) -> Result<(), String> {
    fn mismatch<E>(_: E) -> String {
        "open failed: the tag did not match".to_string()
    }
    match key {
        Key::Ring(key) => {
            let nonce = Nonce::assume_unique_for_key(NONCE);
            key.open_in_place(nonce, Aad::empty(), sealed)
                .map(drop)
                .map_err(mismatch)
        }
        Key::OpenSsl { open, .. } => {
            let Some(text_len) = sealed.len().checked_sub(TAG_LEN) else {
                return Err("open failed: shorter than a tag".to_string());
            };
            let (text, tag) = sealed.split_at_mut(text_len);
            let mut ctx = open.borrow_mut();
            ctx.decrypt_init(None, None, Some(&NONCE))
                .map_err(mismatch)?;
            ctx.set_tag(tag).map_err(mismatch)?;
            ctx.cipher_update_inplace(text, text_len)
                .map_err(mismatch)?;
            ctx.cipher_final(&mut []).map_err(mismatch)?;
            Ok(())
        }
    }
}
