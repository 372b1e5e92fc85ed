#!/usr/bin/env bash
# Installs the Debian package as a fleet host would and takes it away
# again: dpkg -i; mitbench --version, --help, its man page and completion
# script from where the package put them; promtool test rules on its
# alert and recording rules; systemd-analyze verify on its
# units (installed disabled); dpkg --purge; then no file of the package is
# left. Needs root and a package from contrib/deb.sh. CI runs it.
#
# usage: contrib/check-deb.sh
set -euo pipefail
cd "$(dirname "$0")/.."

deb=$(ls -t target/debian/mitbench_*.deb | head -1)
if dpkg -s mitbench >/dev/null 2>&1; then
    echo "check-deb: a mitbench package is installed already; not touching it" >&2
    exit 1
fi
dpkg -i "$deb"
installed=$(mktemp)
trap 'rm -f "$installed"; dpkg --purge mitbench >/dev/null 2>&1 || true' EXIT
# The package's own files (its directories may be shared with others).
dpkg -L mitbench | while read -r path; do
    if [ -f "$path" ] || [ -L "$path" ]; then echo "$path"; fi
done >"$installed"
echo "check-deb: installed $(wc -l <"$installed") files"

mitbench --version
mitbench completions bash >/dev/null
# Whole outputs are read before grep (grep -q would close the pipe early).
help=$(mitbench --help)
grep -q "Usage: mitbench" <<<"$help"
grep -qx /usr/share/man/man1/mitbench.1.gz "$installed"
run_page=$(zcat /usr/share/man/man1/mitbench-run.1.gz)
grep -qF -- '\-\-probe' <<<"$run_page"
if command -v man >/dev/null 2>&1; then
    page=$(MANPAGER=cat MANWIDTH=80 man mitbench 2>/dev/null)
    grep -q "mitbench-run" <<<"$page"
    echo "check-deb: man mitbench reads the page"
else
    echo "check-deb: no man here (man-db not installed); read the page with zcat instead"
fi
grep -q "complete -F _mitbench" /usr/share/bash-completion/completions/mitbench
# The alert and recording rules pass their own tests where installed.
grep -qx /usr/share/mitbench/grafana/mitbench-dashboard.json "$installed"
if command -v promtool >/dev/null 2>&1; then
    promtool test rules /usr/share/mitbench/prometheus/rules_test.yml
    echo "check-deb: promtool test rules passed on the installed rules"
else
    echo "check-deb: promtool is not here (no prometheus package); installed rules not tested"
fi
# Installed, not enabled: nothing runs until the user enables the timer.
units=()
for unit in mitbench-textfile.service mitbench-textfile.timer; do
    units+=("$(grep -E "^(/usr)?/lib/systemd/system/$unit$" "$installed")")
    if [ -e "/etc/systemd/system/timers.target.wants/$unit" ]; then
        echo "check-deb: $unit is enabled by the install" >&2
        exit 1
    fi
done
if command -v systemd-analyze >/dev/null 2>&1; then
    systemd-analyze verify "${units[@]}"
    echo "check-deb: systemd-analyze verify passed"
else
    echo "check-deb: systemd-analyze is not here (no systemd package); units not verified"
fi

dpkg --purge mitbench
left=0
while read -r path; do
    if [ -e "$path" ] || [ -L "$path" ]; then
        echo "check-deb: left behind: $path" >&2
        left=1
    fi
done <"$installed"
[ "$left" = 0 ]
echo "check-deb: removed; no file of the package left"
