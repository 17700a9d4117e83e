#!/usr/bin/env bash
# How long a newcomer waits: `tools/bootstrap.sh demo` from a fresh clone of
# this repository's HEAD (Debian's packages already installed), then the
# slowest objects of that build, each compile timed on its own.
#
#   bash bench/build_time.sh            wall and CPU time of the demo bootstrap
#   bash bench/build_time.sh --objects  and the ten slowest compiles
#
# Run it on an otherwise idle machine; docs/performance.md has the figures.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
objects=0
[ "${1:-}" = --objects ] && objects=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone -q "$root" "$work/clone"
echo "build_time: $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT="build_time: bootstrap.sh demo: %R s wall, %U s user, %S s system"
time (cd "$work/clone" && bash tools/bootstrap.sh demo >"$work/demo.out" 2>"$work/demo.err") ||
  { tail -20 "$work/demo.err" >&2; exit 1; }
echo "build_time: the demo's last line: $(tail -1 "$work/demo.out")"

if [ $objects = 1 ]; then
  # The same configuration, each compile under /usr/bin/time.
  cmake -S "$work/clone" -B "$work/timed" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_BUILD_TESTS=OFF \
    -DBP_WITH_CUDA=OFF -DBP_WITH_PYTHON=OFF \
    "-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/time;-a;-o;$work/times;-f;%e %C" >/dev/null
  cmake --build "$work/timed" -j "$(nproc)" --target runtime >/dev/null
  python3 - "$work/times" <<'EOF'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"([\d.]+) .* -c (\S+)", line)
    if m:
        rows.append((float(m.group(1)), m.group(2).split("/clone/", 1)[-1]))
rows.sort(reverse=True)
print(f"build_time: {len(rows)} compiles, {sum(t for t, _ in rows):.0f} s of CPU in all; the slowest:")
for t, src in rows[:10]:
    print(f"  {t:7.1f} s  {src}")
EOF
fi
