//! The XDP redirect path of seed 001 in user space: a ring of Ethernet/IPv4
//! frames through four stages (parse, lookup, rewrite, transmit), each
//! reached through a function pointer. With B = 1 every packet pays four
//! indirect calls, as the per-packet driver path did; with bulks of B a
//! stage is called once per B packets and loops inside, which is how bulking
//! won back most of the retpoline toll.

use super::dispatch::{Dispatch, Fn3, call};
use crate::measure::harness::Harness;
use crate::measure::probes::{
    Batched, Config, Declaration, Outcome, Placement, Probe, Role, TollPair,
};
use serde::Serialize;
use serde_json::json;
use std::fmt;

/// The bulk the kernel's XDP redirect settled on after seed 001
/// (DEV_MAP_BULK_SIZE).
const KERNEL_XDP_BULK: usize = 16;
pub const BULKS: [usize; 9] = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const RING: usize = 256;
const ROUTES: usize = 1024;

pub struct Pipeline {
    pub frame_bytes: usize,
    declaration: Declaration,
}

const fn pipeline(id: &'static str, frame_bytes: usize) -> Pipeline {
    Pipeline {
        frame_bytes,
        declaration: Declaration::new(id, "001", "packet").summary("parse, lookup, rewrite, transmit through function pointers, per packet (B=1) or in bulks of B").requires(&["x86-64"]).rate_unit("Mpps"),
    }
}

pub const PIPELINE_64: Pipeline = pipeline("indirect/pipeline-64", 64);
pub const PIPELINE_1500: Pipeline = pipeline("indirect/pipeline-1500", 1500);

/// Packets through the stages by one dispatch, `bulk` packets per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bulking {
    pub dispatch: Dispatch,
    pub bulk: usize,
    frame_bytes: usize,
}

impl fmt::Display for Bulking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/B={}", self.dispatch.name(), self.bulk)
    }
}

impl Serialize for Bulking {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({
            "dispatch": self.dispatch.name(),
            "batch": self.bulk,
            "frame_bytes": self.frame_bytes,
            "ring_frames": RING,
            "indirect_calls_per_packet": 4.0 / self.bulk as f64,
        })
        .serialize(s)
    }
}

impl Config for Bulking {
    fn role(&self) -> Role {
        Role::baseline_if(self.dispatch == Dispatch::Plain && self.bulk == 1)
    }

    fn batch(&self) -> Option<Batched> {
        Some(Batched::new(self.dispatch.name(), self.bulk as u64))
    }

    fn seed_choice(&self) -> Option<&'static str> {
        (self.bulk == KERNEL_XDP_BULK).then_some("the kernel's XDP bulk of 16")
    }
}

/// One packet's descriptor, as a driver's RX ring holds it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Desc {
    offset: u32,
    len: u32,
    dst: u32,
    port: u32,
}

/// What the stages share: the frames, the routing table, the TX ring.
#[repr(C)]
struct Ring {
    frames: Vec<u8>,
    frame_bytes: usize,
    descs: Vec<Desc>,
    routes: Vec<u32>,
    tx: Vec<u32>,
    tx_head: usize,
    tx_bytes: u64,
}

// Ethernet + IPv4 header offsets.
const ETHERTYPE: usize = 12;
const IP: usize = 14;
const TTL: usize = IP + 8;
const CHECKSUM: usize = IP + 10;
const DST: usize = IP + 16;

impl Ring {
    fn new(frame_bytes: usize) -> Ring {
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        let mut frames = vec![0u8; RING * frame_bytes];
        let mut descs = Vec::with_capacity(RING);
        for (i, frame) in frames.chunks_mut(frame_bytes).enumerate() {
            frame[ETHERTYPE..ETHERTYPE + 2].copy_from_slice(&0x0800u16.to_be_bytes());
            frame[IP] = 0x45;
            frame[IP + 2..IP + 4].copy_from_slice(&((frame_bytes - IP) as u16).to_be_bytes());
            frame[TTL] = 64;
            frame[IP + 9] = 17;
            frame[DST..DST + 4].copy_from_slice(&rng.u32(..).to_be_bytes());
            let sum = ipv4_checksum(&frame[IP..IP + 20]);
            frame[CHECKSUM..CHECKSUM + 2].copy_from_slice(&sum.to_be_bytes());
            descs.push(Desc {
                offset: (i * frame_bytes) as u32,
                len: frame_bytes as u32,
                ..Desc::default()
            });
        }
        Ring {
            frames,
            frame_bytes,
            descs,
            routes: (0..ROUTES).map(|_| rng.u32(..16)).collect(),
            tx: vec![0; RING],
            tx_head: 0,
            tx_bytes: 0,
        }
    }
}

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .enumerate()
        .filter(|(i, _)| *i != 5)
        .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The descriptors `descs[at..at + n]` and the ring they belong to.
///
/// # Safety
/// `ring` must point to a live Ring with `at + n <= RING`.
unsafe fn parts<'a>(ring: usize, at: usize, n: usize) -> (&'a mut Ring, usize, usize) {
    (unsafe { &mut *(ring as *mut Ring) }, at, at + n)
}

/// Reads the ethertype and destination address.
#[inline(never)]
unsafe extern "C" fn parse(ring: usize, at: usize, n: usize) -> usize {
    let (r, from, to) = unsafe { parts(ring, at, n) };
    for i in from..to {
        let d = r.descs[i];
        let f = &r.frames[d.offset as usize..];
        let ipv4 = u16::from_be_bytes([f[ETHERTYPE], f[ETHERTYPE + 1]]) == 0x0800;
        r.descs[i].dst = if ipv4 {
            u32::from_be_bytes([f[DST], f[DST + 1], f[DST + 2], f[DST + 3]])
        } else {
            0
        };
    }
    n
}

/// Hashes the destination into the routing table.
#[inline(never)]
unsafe extern "C" fn lookup(ring: usize, at: usize, n: usize) -> usize {
    let (r, from, to) = unsafe { parts(ring, at, n) };
    for i in from..to {
        let slot = (r.descs[i].dst.wrapping_mul(0x9e37_79b1) >> 22) as usize;
        r.descs[i].port = r.routes[slot % ROUTES];
    }
    n
}

/// Sets the destination MAC, decrements the TTL and patches the checksum
/// incrementally (RFC 1624), as a forwarding path does.
#[inline(never)]
unsafe extern "C" fn rewrite(ring: usize, at: usize, n: usize) -> usize {
    let (r, from, to) = unsafe { parts(ring, at, n) };
    for i in from..to {
        let d = r.descs[i];
        let f = &mut r.frames[d.offset as usize..];
        f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, d.port as u8]);
        let old = u16::from_be_bytes([f[TTL], f[TTL + 1]]);
        f[TTL] = f[TTL].wrapping_sub(1);
        let new = u16::from_be_bytes([f[TTL], f[TTL + 1]]);
        let sum = u16::from_be_bytes([f[CHECKSUM], f[CHECKSUM + 1]]);
        let mut acc = u32::from(!sum) + u32::from(!old) + u32::from(new);
        acc = (acc & 0xffff) + (acc >> 16);
        acc = (acc & 0xffff) + (acc >> 16);
        f[CHECKSUM..CHECKSUM + 2].copy_from_slice(&(!(acc as u16)).to_be_bytes());
    }
    n
}

/// Queues the frames on the TX ring.
#[inline(never)]
unsafe extern "C" fn transmit(ring: usize, at: usize, n: usize) -> usize {
    let (r, from, to) = unsafe { parts(ring, at, n) };
    for i in from..to {
        let d = r.descs[i];
        let head = r.tx_head % RING;
        r.tx[head] = d.offset;
        r.tx_head = r.tx_head.wrapping_add(1);
        r.tx_bytes += u64::from(d.len);
    }
    n
}

const STAGES: [Fn3; 4] = [parse, lookup, rewrite, transmit];

impl Pipeline {
    fn bulking(&self, dispatch: Dispatch, bulk: usize) -> Bulking {
        Bulking {
            dispatch,
            bulk,
            frame_bytes: self.frame_bytes,
        }
    }
}

/// Runs `packets` packets through the stages in bulks of `bulk`, resuming
/// where the last call stopped in the ring.
fn run(
    ring: &mut Ring,
    cursor: &mut usize,
    stages: &[usize; 4],
    dispatch: Dispatch,
    bulk: usize,
    packets: u64,
) {
    let ring_ptr = ring as *mut Ring as usize;
    let mut left = packets as usize;
    while left > 0 {
        let n = bulk.min(left).min(RING - *cursor);
        for (stage, likely) in stages.iter().zip(STAGES) {
            // SAFETY: every stage takes (ring, at, n) with at + n <= RING,
            // and the ring outlives the call.
            unsafe { call(dispatch, *stage, likely, ring_ptr, *cursor, n) };
        }
        *cursor = (*cursor + n) % RING;
        left -= n;
    }
}

described_by_field!(Pipeline);

impl Probe for Pipeline {
    type Config = Bulking;

    fn configs(&self) -> Vec<Bulking> {
        Dispatch::ALL
            .into_iter()
            .flat_map(|d| BULKS.into_iter().map(move |b| self.bulking(d, b)))
            .collect()
    }

    fn toll(&self) -> Option<TollPair<Bulking>> {
        Some(TollPair {
            toll: self.bulking(Dispatch::Retpoline, 1),
            reference: self.bulking(Dispatch::Plain, 1),
        })
    }

    fn measure(&self, config: &Bulking, placement: &Placement, harness: &Harness) -> Outcome {
        let Bulking { dispatch, bulk, .. } = *config;
        let mut ring = Ring::new(self.frame_bytes);
        // Loaded through black_box so the compiler cannot see the targets
        // and turn the indirect calls into direct ones.
        let stages = std::hint::black_box(STAGES.map(|f| f as usize));
        let mut cursor = 0;
        let measurement =
            harness.measure(|n| run(&mut ring, &mut cursor, &stages, dispatch, bulk, n));
        std::hint::black_box(ring.tx_bytes);
        Outcome::on_cpus(measurement, vec![placement.cpu])
    }
}
