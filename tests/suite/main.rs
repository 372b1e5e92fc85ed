//! mitbench's integration tests, one binary: a directory per layer of src
//! that its tests hold, in the order docs/layout.md gives the layers from
//! the bottom up, and `common` what they share. One binary links the
//! library once, and its tests share the test threads rather than each
//! file's binary waiting for the one before.
//!
//! The tests of one process share it: a test that counts the process's
//! threads, children or descriptors, or reaps any child, runs again in a
//! process of its own (`common::alone`), and the tests that time probes
//! in this process take the measuring CPU one at a time
//! (`common::on_the_measuring_cpu`).

mod common;

mod analysis {
    mod changes;
    mod rounds;
    mod stats;
}

mod measure {
    mod harness {
        mod harness_logic;
    }

    mod probes {
        mod cleanup;
        mod every_variant;
        mod failures;
        mod phases;
        mod section;
        mod syscall;
        mod teardown;
        mod thread;
    }
}

mod inventory {
    mod cpu_matrix;
    mod fixture_trees;
    mod paravirt;
    mod properties;
}

mod synthetic {
    mod hooked;
    mod misfits;
    mod runs;
    mod speed;
    mod timelines;
}

mod store {
    mod results {
        mod kernel_floors;
        mod names;
        mod one_figure;
        mod schemas;
    }

    mod history {
        mod history_changes;
        mod sqlite_files;
    }
}

mod answer {
    mod summary;
}

mod plan {
    mod boots;
    mod vectors;
}

mod attribute {
    mod attribution;
}

mod compare {
    mod level_shift;
    mod stored_documents;
}

mod tax {
    mod known_workloads;
}

mod export {
    mod metrics;
    mod report;
}

mod cli {
    mod command_line;
    mod install;
    mod interrupt;
    mod locked_down;
}

mod docs {
    mod layout;
    mod readme;
}
