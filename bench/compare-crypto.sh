#!/usr/bin/env bash
# Compares mitbench's crypto throughput at 1 MiB with `openssl speed -evp`
# for the same algorithms on the same CPU, openssl run before and after
# mitbench so a host that changes speed meanwhile shows as a spread.
# Usage: bench/compare-crypto.sh [CPU]
# OpenSSL's AEAD figures are encryption; crc32c has no OpenSSL counterpart.
set -euo pipefail
cd "$(dirname "$0")/.."
cpu="${1:-$(($(nproc) - 1))}"
command -v openssl >/dev/null || { echo "openssl is not installed" >&2; exit 1; }
algorithms="sha1 sha256 sha512 aes-128-gcm aes-256-gcm chacha20-poly1305"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

openssl_pass() {
    for alg in $algorithms; do
        # The last line is "<alg> <thousands of bytes per second>k".
        taskset -c "$cpu" openssl speed -evp "$alg" -bytes 1048576 -seconds 2 2>/dev/null |
            awk -v alg="$alg" 'END { sub(/k$/, "", $NF); print alg, $NF * 1000 / 1e6 }'
    done
}

openssl_pass >"$work/before"
cargo run --release --quiet -- run --quiet --no-history --cpu "$cpu" --probe 'section/crypto-1MiB' \
    --json "$work/mitbench.json" >/dev/null 2>&1
openssl_pass >"$work/after"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def pass_of(name):
    return dict((l.split()[0], float(l.split()[1])) for l in open(f"{work}/{name}"))
before, after = pass_of("before"), pass_of("after")
doc = json.load(open(f"{work}/mitbench.json"))
print(f"{'algorithm':20s} {'mitbench':>10s} {'openssl before':>15s} {'after':>8s} {'diff to mean':>13s}")
for alg in before:
    variant = alg + "/encrypt" if alg.startswith(("aes", "chacha")) else alg
    record = next(r for r in doc["results"] if r["variant"] == variant)
    ours = record["derived"]["throughput"]["mib_per_s"] * 1048576 / 1e6
    mean = (before[alg] + after[alg]) / 2
    print(f"{alg:20s} {ours:7.0f} MB/s {before[alg]:10.0f} MB/s {after[alg]:8.0f} {(ours / mean - 1) * 100:+12.1f}%")
PY
