# Shared by the bench scripts: the CPU to measure on (the first argument,
# default the highest allowed), a scratch directory removed on exit (or
# KEEP=DIR, kept), and a release build of mitbench.
cpu=${1:-$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cargo build --release --quiet
