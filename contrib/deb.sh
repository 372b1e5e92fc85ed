#!/usr/bin/env bash
# Builds mitbench's Debian package into target/debian/: the release binary,
# then its manual pages and completion scripts made by that binary (so they
# match its --help), then cargo-deb, installed from crates.io if missing.
#
# usage: contrib/deb.sh      then: dpkg -i target/debian/mitbench_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deb --version >/dev/null 2>&1; then
    cargo install --locked cargo-deb
fi
cargo build --release --locked

made=target/package
rm -rf "$made"
mkdir -p "$made/man" "$made/completions"
./target/release/mitbench manpages "$made/man" >/dev/null
gzip -9n "$made"/man/*.1
./target/release/mitbench completions bash >"$made/completions/mitbench"
./target/release/mitbench completions zsh >"$made/completions/_mitbench"
./target/release/mitbench completions fish >"$made/completions/mitbench.fish"

# A fleet package carries no debug info (the release profile keeps line
# tables for backtraces in a developer's build).
cargo deb --no-build --locked --strip
