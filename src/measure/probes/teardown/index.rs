//! The index a teardown releases (seed 000's enclave page array): M keys,
//! each owning a heap object, behind one mutex that lookups also take. How
//! often the release lets go of the lock is the policy under test.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Entries alive in the whole process: made minus dropped.
static LIVE: AtomicU64 = AtomicU64::new(0);

/// What one key owns: a small heap object, like a page's descriptor.
pub struct Entry {
    words: [u64; 6],
}

impl Entry {
    fn new(key: u32) -> Box<Entry> {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Box::new(Entry {
            words: [u64::from(key); 6],
        })
    }

    pub fn key(&self) -> u64 {
        self.words[0]
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Entries made and not yet dropped, across every index of the process.
pub fn live_entries() -> u64 {
    LIVE.load(Ordering::Relaxed)
}

/// When the release lets go of the lock and the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Unlock, yield and relock after every `K` entries.
    Every(usize),
    /// Only when a lookup is waiting for the lock.
    WhenWaited,
}

pub struct Index {
    map: Mutex<BTreeMap<u32, Box<Entry>>>,
    /// Lookups about to take, or waiting for, the lock.
    waiters: AtomicUsize,
}

impl Default for Index {
    fn default() -> Index {
        Index {
            map: Mutex::new(BTreeMap::new()),
            waiters: AtomicUsize::new(0),
        }
    }
}

impl Index {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u32, Box<Entry>>> {
        // A panic elsewhere cannot leave the map half-changed in a way that
        // matters to a benchmark; keep going with it.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Fills the index back up to `entries` keys, 0..entries, each with
    /// its object. Releases take the lowest keys first, so the missing
    /// keys are found from 0 up.
    pub fn fill_to(&self, entries: u32) {
        let mut map = self.lock();
        if map.is_empty() {
            // Sorted keys let the map build itself in one pass.
            *map = (0..entries).map(|key| (key, Entry::new(key))).collect();
            return;
        }
        for key in 0..entries {
            if map.len() >= entries as usize {
                break;
            }
            map.entry(key).or_insert_with(|| Entry::new(key));
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Looks `key` up as a co-runner does, announcing itself as a waiter
    /// until it holds the lock; returns whether the key was there.
    pub fn lookup(&self, key: u32) -> bool {
        self.waiters.fetch_add(1, Ordering::AcqRel);
        let map = self.lock();
        self.waiters.fetch_sub(1, Ordering::AcqRel);
        black_box(map.get(&key).map(|e| e.key())).is_some()
    }

    /// Releases up to `count` entries, lowest keys first, under `policy`;
    /// returns the times it let go of the lock and yielded.
    pub fn release(&self, count: usize, policy: Policy) -> u64 {
        let mut yields = 0;
        let mut since_yield = 0;
        let mut released = 0;
        let mut map = self.lock();
        while released < count {
            let Some((_, entry)) = map.pop_first() else {
                break;
            };
            drop(entry);
            released += 1;
            since_yield += 1;
            let let_go = match policy {
                Policy::Every(k) => since_yield >= k,
                Policy::WhenWaited => self.waiters.load(Ordering::Acquire) > 0,
            };
            if let_go && !map.is_empty() {
                drop(map);
                std::thread::yield_now();
                map = self.lock();
                yields += 1;
                since_yield = 0;
            }
        }
        yields
    }
}
