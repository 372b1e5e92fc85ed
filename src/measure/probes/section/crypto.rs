//! Crypto throughput per algorithm and buffer size (seed 004's tcrypt
//! table): one item is one buffer hashed, encrypted or decrypted whole.

use super::algorithms::{self, ALGORITHMS, Algorithm};
use crate::measure::harness::Harness;
use crate::measure::probes::{Config, Declaration, Outcome, Placement, Probe, Unsupported};
use serde::Serialize;
use serde_json::json;
use std::fmt;
use std::hint::black_box;

pub struct Crypto {
    pub bytes: usize,
    declaration: Declaration,
}

const fn crypto(id: &'static str, bytes: usize) -> Crypto {
    Crypto {
        bytes,
        declaration: Declaration::new(id, "004", "buffer").summary(
            "hash, encrypt or decrypt one buffer whole, with the fastest code the crates pick here",
        ),
    }
}

pub const CRYPTOS: [Crypto; 3] = [
    crypto("section/crypto-1KiB", 1 << 10),
    crypto("section/crypto-64KiB", 64 << 10),
    crypto("section/crypto-1MiB", 1 << 20),
];

/// The share of the per-variant budget each of the thirty variants takes;
/// most settle well within it.
const BUDGET_SHARE: f64 = 1.0 / 3.0;

/// Buffers this long or longer take a millisecond-scale item each.
const LONG_ITEM_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Digest,
    Encrypt,
    Decrypt,
}

/// One algorithm one way over a buffer of `bytes`. None is a baseline:
/// the algorithms are alternatives, not variants of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cipher {
    algorithm: Algorithm,
    direction: Direction,
    bytes: usize,
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.algorithm.name();
        match self.direction {
            Direction::Digest => f.write_str(name),
            Direction::Encrypt => write!(f, "{name}/encrypt"),
            Direction::Decrypt => write!(f, "{name}/decrypt"),
        }
    }
}

impl Serialize for Cipher {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({"algorithm": self.algorithm.name(), "bytes_per_item": self.bytes}).serialize(s)
    }
}

impl Config for Cipher {
    fn bytes_per_item(&self) -> Option<u64> {
        Some(self.bytes as u64)
    }
}

/// A buffer whose bytes are not all alike.
pub fn buffer(bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (i * 131 + 7) as u8).collect()
}

described_by_field!(Crypto);

impl Probe for Crypto {
    type Config = Cipher;

    /// Every algorithm, and both directions of the ones that encrypt.
    fn configs(&self) -> Vec<Cipher> {
        let bytes = self.bytes;
        ALGORITHMS
            .iter()
            .flat_map(|&algorithm| {
                let directions: &[Direction] = if algorithm.is_aead() {
                    &[Direction::Encrypt, Direction::Decrypt]
                } else {
                    &[Direction::Digest]
                };
                directions.iter().map(move |&direction| Cipher {
                    algorithm,
                    direction,
                    bytes,
                })
            })
            .collect()
    }

    fn measure(&self, cipher: &Cipher, placement: &Placement, harness: &Harness) -> Outcome {
        let Cipher {
            algorithm,
            direction,
            ..
        } = *cipher;
        let harness = harness.with_budget_share(BUDGET_SHARE);
        let harness = if self.bytes >= LONG_ITEM_BYTES {
            harness.for_long_items()
        } else {
            harness
        };
        let mut data = buffer(self.bytes);
        let measured = match direction {
            // A digest the library will not make here (a crypto policy
            // that disables SHA-1) would time nothing, fast and wrong.
            Direction::Digest if algorithms::digest_once(algorithm, &data).is_none() => {
                return Outcome::Unsupported(Unsupported::probe_failed(format!(
                    "{} cannot make {} here",
                    algorithm.library().name(),
                    algorithm.name()
                )));
            }
            Direction::Digest => harness.measure_each(|| {
                algorithms::digest_once(algorithm, black_box(&data)).map(|d| d.as_slice()[0])
            }),
            Direction::Encrypt => {
                let Some(key) = algorithm.key() else {
                    return Outcome::Unsupported(Unsupported::probe_failed(
                        "the key could not be made",
                    ));
                };
                let mut failed = false;
                let m = harness.measure_each(|| {
                    failed |= algorithms::seal(&key, black_box(&mut data)).is_err();
                });
                if failed {
                    return Outcome::Unsupported(Unsupported::probe_failed("sealing failed"));
                }
                m
            }
            Direction::Decrypt => {
                let Some(key) = algorithm.key() else {
                    return Outcome::Unsupported(Unsupported::probe_failed(
                        "the key could not be made",
                    ));
                };
                // Opening in place turns the buffer back into plaintext, so
                // every item opens its own copy of one sealed buffer, made
                // outside the timed region.
                let sealed = match algorithms::seal(&key, &mut data) {
                    Ok(tag) => [data.as_slice(), tag.as_ref()].concat(),
                    Err(e) => return Outcome::Unsupported(Unsupported::probe_failed(e)),
                };
                let mut failure = None;
                let m = harness.measure_prepared(
                    |n| vec![sealed.clone(); n as usize],
                    |copies, n| {
                        for copy in copies.iter_mut().take(n as usize) {
                            if let Err(e) = algorithms::open(&key, black_box(copy)) {
                                failure.get_or_insert(e);
                            }
                        }
                    },
                );
                if let Some(e) = failure {
                    return Outcome::Unsupported(Unsupported::probe_failed(e));
                }
                m
            }
        };
        let mut outcome = Outcome::on_cpus(measured, vec![placement.cpu]);
        if let Outcome::Measured(m) = &mut outcome {
            m.notes.push(algorithm.implementation());
        }
        outcome
    }
}
