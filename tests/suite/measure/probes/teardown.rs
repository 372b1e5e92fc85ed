//! A teardown frees every entry exactly once, whatever its policy, and
//! leaves no memory and no co-runner behind.

use crate::common;

use mitbench::measure::probes::teardown::index::{self, Index, Policy};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, Ordering};

/// The system allocator, counting the bytes held on behalf of threads
/// that asked to be counted (the test harness allocates on its own
/// threads meanwhile).
struct Counting;

static HELD: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn counted() -> bool {
    COUNTED.try_with(Cell::get).unwrap_or(false)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counted() {
            HELD.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counted() {
            HELD.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests here count process-wide entries and bytes: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn every_policy_frees_every_entry_once_and_leaks_nothing() {
    // The index entries alive are counted across the process: another
    // test's teardown probe must not be running beside it.
    if !common::alone(
        module_path!(),
        "every_policy_frees_every_entry_once_and_leaks_nothing",
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    COUNTED.with(|c| c.set(true));
    const ENTRIES: u32 = 10_000;
    for policy in [
        Policy::Every(1),
        Policy::Every(7),
        Policy::Every(4096),
        Policy::Every(usize::MAX),
        Policy::WhenWaited,
    ] {
        let held_before = HELD.load(Ordering::Relaxed);
        let live_before = index::live_entries();
        let index = Index::default();
        index.fill_to(ENTRIES);
        assert_eq!(index.len(), ENTRIES as usize);
        assert_eq!(index::live_entries(), live_before + u64::from(ENTRIES));
        // Part, then a refill of just what is missing, then the rest.
        let yields = index.release(3_000, policy);
        assert_eq!(index::live_entries(), live_before + 7_000, "{policy:?}");
        if let Policy::Every(k) = policy {
            assert_eq!(yields as usize, 3_000 / k, "{policy:?} yields");
        }
        index.fill_to(ENTRIES);
        assert_eq!(index::live_entries(), live_before + u64::from(ENTRIES));
        index.release(usize::MAX, policy);
        assert!(index.is_empty());
        assert_eq!(
            index::live_entries(),
            live_before,
            "{policy:?}: not all freed"
        );
        drop(index);
        assert_eq!(
            HELD.load(Ordering::Relaxed),
            held_before,
            "{policy:?}: bytes still held after the teardown"
        );
    }
}

#[test]
fn the_probe_reports_sane_figures_and_leaves_nothing_running() {
    // It counts the process's helper threads and the index entries alive:
    // another test's probe must not be running beside it.
    if !common::alone(
        module_path!(),
        "the_probe_reports_sane_figures_and_leaves_nothing_running",
    ) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let live_before = index::live_entries();
    let cpu = common::measuring_cpu();
    for name in ["K=1", "K=4096", "waiter"] {
        let m = cpu.measure("teardown/index-2^16", name);
        let figure = common::sane_figures(name, &m.figures);
        // Wait figures exist only where a lookup completed within a
        // release, and then both. (Not p99 against max: one quantile
        // function orders them, whatever the probe does.)
        let has = |key: &str| m.figures.iter().any(|f| f.name == key);
        for side in ["same-cpu", "other-cpu"] {
            let (p99, max) = (format!("{side} wait p99"), format!("{side} wait max"));
            assert_eq!(has(&p99), has(&max), "{name}: {side}");
        }
        if name == "K=1" {
            // One let-go an entry released, extrapolated to the index: a
            // sample of a slice never reaches the index's last entry, the
            // one that lets go of nothing.
            assert!((65_535.0..=65_536.0).contains(&figure("yields")));
        }
        assert_eq!(common::helper_threads(), 0, "{name}: co-runner left behind");
        assert_eq!(
            index::live_entries(),
            live_before,
            "{name}: entries left alive"
        );
    }
}

#[test]
fn a_sample_lets_go_of_the_lock_a_bounded_number_of_times() {
    // A let-go at K = 1 is a yield to the same-CPU co-runner, microseconds
    // each: a sample must not hold thousands upon thousands of them, nor
    // release more than the index holds, nor lose the batch it prices.
    for probe in mitbench::measure::probes::registry() {
        if !probe.declaration().id.starts_with("teardown/") {
            continue;
        }
        for variant in probe.variants() {
            let param = |key: &str| variant.params[key].as_u64();
            let label = format!("{} {}", probe.declaration().id, variant.name);
            let sample =
                param("sample_entries").unwrap_or_else(|| panic!("{label}: no sample_entries"));
            let entries = param("entries").expect("entries");
            assert!(
                sample <= entries,
                "{label}: a sample of {sample} from {entries}"
            );
            if let Some(k) = param("batch") {
                assert!(
                    sample >= k.min(entries),
                    "{label}: a sample shorter than a batch"
                );
                assert!(
                    sample / k <= 4096,
                    "{label}: {} let-gos a sample",
                    sample / k
                );
            }
        }
    }
}
