//! Crypto throughput per algorithm and buffer size (seed 004's tcrypt
//! table): one item is one buffer hashed, encrypted or decrypted whole.

use super::algorithms::{self, ALGORITHMS, Algorithm};
use crate::harness::Harness;
use crate::probes::{Outcome, Placement, Probe, ProbeInfo, Variant, static_name};
use serde_json::json;
use std::hint::black_box;

pub struct Crypto {
    pub bytes: usize,
}

pub const CRYPTOS: [Crypto; 3] = [
    Crypto { bytes: 1 << 10 },
    Crypto { bytes: 64 << 10 },
    Crypto { bytes: 1 << 20 },
];

/// The share of the per-variant budget each of the thirty variants takes;
/// most settle well within it.
const BUDGET_SHARE: f64 = 1.0 / 3.0;

/// Buffers this long or longer take a millisecond-scale item each.
const LONG_ITEM_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Digest,
    Encrypt,
    Decrypt,
}

/// Every algorithm, and both directions of the ones that encrypt.
fn variants() -> Vec<(Algorithm, Direction)> {
    ALGORITHMS
        .iter()
        .flat_map(|&a| {
            if a.is_aead() {
                vec![(a, Direction::Encrypt), (a, Direction::Decrypt)]
            } else {
                vec![(a, Direction::Digest)]
            }
        })
        .collect()
}

fn variant_name(algorithm: Algorithm, direction: Direction) -> &'static str {
    match direction {
        Direction::Digest => algorithm.name(),
        Direction::Encrypt => static_name(format!("{}/encrypt", algorithm.name())),
        Direction::Decrypt => static_name(format!("{}/decrypt", algorithm.name())),
    }
}

/// A buffer whose bytes are not all alike.
pub fn buffer(bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (i * 131 + 7) as u8).collect()
}

impl Probe for Crypto {
    fn info(&self) -> ProbeInfo {
        let id = static_name(format!("section/crypto-{}", super::size_name(self.bytes)));
        ProbeInfo {
            id,
            family: "section",
            seed: "004",
            summary: "hash, encrypt or decrypt one buffer whole, with the fastest code the crates pick here",
            item: "buffer",
            requirements: vec![],
            variants: variants()
                .into_iter()
                .map(|(algorithm, direction)| Variant {
                    name: variant_name(algorithm, direction),
                    baseline: false,
                    params: json!({
                        "algorithm": algorithm.name(),
                        "bytes_per_item": self.bytes,
                    }),
                })
                .collect(),
            derived: None,
        }
    }

    fn measure(&self, variant: &Variant, placement: &Placement, harness: &Harness) -> Outcome {
        let Some(&(algorithm, direction)) = variants()
            .iter()
            .find(|&&(a, d)| variant_name(a, d) == variant.name)
        else {
            return Outcome::Unsupported(format!("no such variant: {}", variant.name));
        };
        let harness = harness.with_budget_share(BUDGET_SHARE);
        let harness = if self.bytes >= LONG_ITEM_BYTES {
            harness.for_long_items()
        } else {
            harness
        };
        let mut data = buffer(self.bytes);
        let measured = match direction {
            Direction::Digest => harness.measure_each(|| {
                algorithms::digest_once(algorithm, black_box(&data)).map(|d| d.as_slice()[0])
            }),
            Direction::Encrypt => {
                let Some(key) = algorithm.key() else {
                    return Outcome::Unsupported("the key could not be made".into());
                };
                let mut failed = false;
                let m = harness.measure_each(|| {
                    failed |= algorithms::seal(&key, black_box(&mut data)).is_err();
                });
                if failed {
                    return Outcome::Unsupported("sealing failed".into());
                }
                m
            }
            Direction::Decrypt => {
                let Some(key) = algorithm.key() else {
                    return Outcome::Unsupported("the key could not be made".into());
                };
                // Opening in place turns the buffer back into plaintext, so
                // every item opens its own copy of one sealed buffer, made
                // outside the timed region.
                let sealed = match algorithms::seal(&key, &mut data) {
                    Ok(tag) => [data.as_slice(), tag.as_ref()].concat(),
                    Err(e) => return Outcome::Unsupported(e),
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
                    return Outcome::Unsupported(e);
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
