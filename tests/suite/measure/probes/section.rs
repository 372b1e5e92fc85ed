//! The section family hashes what it claims to, and its co-runner is gone
//! when a probe returns.

use crate::common;

use mitbench::measure::probes::section::algorithms::{self, ALGORITHMS, Algorithm, Library};
use mitbench::measure::probes::section::chunked::{BUFFER_BYTES, CHUNK_BYTES, hash_in_chunks};

fn data(bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn chunked_digests_equal_one_shot_digests_for_every_chunk_size() {
    let data = data(BUFFER_BYTES);
    for algorithm in ALGORITHMS.into_iter().filter(|a| !a.is_aead()) {
        let once = algorithms::digest_once(algorithm, &data).unwrap();
        // The probe's sizes, and sizes that leave a ragged last chunk.
        for chunk in CHUNK_BYTES
            .into_iter()
            .chain([1, 63, 4097, BUFFER_BYTES + 1])
        {
            let mut between = 0usize;
            let chunked = hash_in_chunks(algorithm, &data, chunk, || between += 1).unwrap();
            assert_eq!(chunked, once, "{} in chunks of {chunk}", algorithm.name());
            assert_eq!(
                between,
                BUFFER_BYTES.div_ceil(chunk) - 1,
                "calls between chunks"
            );
        }
    }
}

#[test]
fn digests_match_known_answers() {
    let abc = b"abc";
    let hex = |a: Algorithm| format!("{:?}", algorithms::digest_once(a, abc).unwrap());
    assert_eq!(
        hex(Algorithm::Sha1),
        "a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    assert_eq!(
        hex(Algorithm::Sha256),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(hex(Algorithm::Sha512).starts_with("ddaf35a193617aba"));
    // CRC-32C of "123456789" is the check value 0xe3069283.
    let check = algorithms::digest_once(Algorithm::Crc32c, b"123456789").unwrap();
    assert_eq!(check.as_slice(), [0xe3, 0x06, 0x92, 0x83]);
}

#[test]
fn aead_round_trips_and_rejects_a_changed_byte() {
    for algorithm in ALGORITHMS.into_iter().filter(|a| a.is_aead()) {
        let key = algorithm.key().unwrap();
        let plain = data(4096);
        let mut buffer = plain.clone();
        let tag = algorithms::seal(&key, &mut buffer).unwrap();
        assert_ne!(
            buffer,
            plain,
            "{}: sealing changed nothing",
            algorithm.name()
        );
        let mut sealed = [buffer.as_slice(), tag.as_ref()].concat();
        let mut tampered = sealed.clone();
        algorithms::open(&key, &mut sealed).unwrap();
        assert_eq!(
            &sealed[..plain.len()],
            plain.as_slice(),
            "{}",
            algorithm.name()
        );
        tampered[100] ^= 1;
        assert!(algorithms::open(&key, &mut tampered).is_err());
    }
}

#[test]
fn openssl_and_ring_seal_to_the_same_bytes_and_open_each_other() {
    // The rows time one library per algorithm; the other must agree, so
    // the choice changes the speed and never what is computed.
    for algorithm in ALGORITHMS.into_iter().filter(|a| a.is_aead()) {
        let openssl = algorithm.key_in(Library::OpenSsl).unwrap();
        let ring = algorithm.key_in(Library::Ring).unwrap();
        for bytes in [0, 1, 15, 1024, 4097] {
            let plain = data(bytes);
            let (mut by_openssl, mut by_ring) = (plain.clone(), plain.clone());
            let tag_openssl = algorithms::seal(&openssl, &mut by_openssl).unwrap();
            let tag_ring = algorithms::seal(&ring, &mut by_ring).unwrap();
            let name = algorithm.name();
            assert_eq!(
                by_openssl, by_ring,
                "{name}, {bytes} bytes: ciphertexts differ"
            );
            assert_eq!(tag_openssl, tag_ring, "{name}, {bytes} bytes: tags differ");
            let mut sealed = [by_ring.as_slice(), &tag_ring].concat();
            algorithms::open(&openssl, &mut sealed).unwrap();
            assert_eq!(&sealed[..bytes], plain.as_slice(), "{name}, {bytes} bytes");
        }
        // A buffer shorter than a tag is refused, not read past.
        assert!(algorithms::open(&openssl, &mut [0u8; 3]).is_err());
    }
}

#[test]
fn every_row_names_the_library_it_times() {
    for algorithm in ALGORITHMS {
        let implementation = algorithm.implementation();
        let library = algorithm.library().name();
        assert!(implementation.starts_with(&library), "{implementation}");
        assert!(!library.is_empty());
    }
    assert!(Library::OpenSsl.name().starts_with("OpenSSL"));
}

#[test]
fn chunked_probe_figures_are_sane_and_its_corunner_has_exited() {
    // It counts the process's helper threads: another test's probe must
    // not be running beside it.
    if !common::alone(
        module_path!(),
        "chunked_probe_figures_are_sane_and_its_corunner_has_exited",
    ) {
        return;
    }
    let cpu = common::measuring_cpu();
    for name in ["never/16MiB", "every/64KiB", "waiting/4KiB"] {
        let m = cpu.measure("section/chunked", name);
        let figure = common::sane_figures(name, &m.figures);
        assert!(figure("wakes") >= 1.0, "{name}: the co-runner never woke");
        match name {
            "never/16MiB" => {
                assert_eq!(figure("yields"), 0.0);
                // Never yielding, a stretch is a whole buffer's digest: at
                // least the CPU time one digest takes here (wall time
                // holds any preemption besides; the factor two leaves room
                // for the clock's speed between the two readings).
                let digest_us = one_digest_cpu_us();
                assert!(
                    figure("longest stretch") >= digest_us / 2.0,
                    "{name}: longest stretch {} us, one digest {digest_us} us of CPU",
                    figure("longest stretch")
                );
            }
            "every/64KiB" => assert_eq!(figure("yields"), (BUFFER_BYTES / (64 << 10) - 1) as f64),
            _ => {}
        }
        assert_eq!(common::helper_threads(), 0, "{name}: co-runner left behind");
    }
}

/// The least CPU time of three one-shot digests of a chunked buffer's
/// size, in microseconds: the work's own cost, whatever else the CPU runs.
fn one_digest_cpu_us() -> f64 {
    let data = data(BUFFER_BYTES);
    let cpu_ns = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
    };
    (0..3)
        .map(|_| {
            let start = cpu_ns();
            std::hint::black_box(algorithms::digest_once(Algorithm::Sha256, &data));
            (cpu_ns() - start) / 1e3
        })
        .fold(f64::INFINITY, f64::min)
}
