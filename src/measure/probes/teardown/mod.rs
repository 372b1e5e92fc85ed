//! Family `teardown` (seed 000): releasing a large index under a lock,
//! letting go every K entries or when someone waits, against what two
//! co-runners that need the lock suffer.

pub mod index;
mod release;

use super::AnyProbe;

pub fn probes() -> Vec<&'static dyn AnyProbe> {
    release::RELEASES
        .iter()
        .map(|r| r as &dyn AnyProbe)
        .collect()
}
