//! Family `teardown` (seed 000): releasing a large index under a lock,
//! letting go every K entries or when someone waits, against what two
//! co-runners that need the lock suffer.

pub mod index;
mod release;

use super::Probe;

pub fn probes() -> Vec<&'static dyn Probe> {
    release::RELEASES.iter().map(|r| r as &dyn Probe).collect()
}
