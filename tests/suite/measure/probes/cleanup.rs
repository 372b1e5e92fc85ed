//! Probes that start threads and processes, or map memory, release them:
//! after every `os` and `memory` variant has run, this process has the
//! threads, children, file descriptors and mappings it had before. (In a
//! process of its own, so no other test's threads are counted.)

use crate::common;

use mitbench::measure::probes;

fn mapping_count() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

fn count_entries(dir: &str) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn probes_leave_no_thread_child_or_descriptor_behind() {
    if !common::alone(
        module_path!(),
        "probes_leave_no_thread_child_or_descriptor_behind",
    ) {
        return;
    }
    let harness = common::tiny_harness();
    let cpu = common::measuring_cpu();
    let placement = &cpu.placement;

    let run_all = || {
        let families = ["os/*", "memory/*", "kernel/*", "syscall/specctrl-switch"];
        let selected = probes::select(&families.map(str::to_string)).unwrap();
        for probe in selected {
            for variant in probe.variants() {
                probe.run(&variant, placement, &harness);
            }
        }
    };
    // glibc keeps the stacks of exited threads and a malloc arena per
    // thread for reuse, so the first pass may add mappings that are caches;
    // a leak would grow the count again on the second.
    run_all();
    let threads = count_entries("/proc/self/task");
    let fds = count_entries("/proc/self/fd");
    let mappings = mapping_count();
    run_all();
    assert_eq!(
        count_entries("/proc/self/task"),
        threads,
        "threads left running"
    );
    assert_eq!(count_entries("/proc/self/fd"), fds, "descriptors left open");
    // Nothing left mapped: a second pass adds no mapping.
    let after = mapping_count();
    assert!(
        after <= mappings,
        "mappings: {mappings} before, {after} after"
    );
    // No child left to reap: waitpid reports ECHILD.
    let rc = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
    assert_eq!(rc, -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ECHILD)
    );
}
