#!/usr/bin/env bash
# CI step: the template plugin builds out of tree against an *installed*
# backplane, and passes `backplane conform --plugin` there.
#   plugins/ci.sh BUILD_DIR     (a configured and built backplane build tree)
# Installs BUILD_DIR into a temporary prefix, builds plugins/template with
# CMAKE_PREFIX_PATH=<prefix>, checks the .so exports only bp_plugin_entry and
# does not link libbackplane, then runs <prefix>/bin/backplane conform on it.
set -euo pipefail
build=$(cd "${1:?usage: plugins/ci.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "plugins/ci.sh: installing $build into a temporary prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

# build_out_of_tree DIR NAME.so SYMBOL: build plugins/DIR against the installed
# copy with -Werror, then check the ABI rules a linker can: NAME.so exports
# SYMBOL and nothing else, and does not link libbackplane. Sets $so.
build_out_of_tree() {
  local dir=$1 file=$2 symbol=$3
  echo "plugins/ci.sh: building plugins/$dir out of tree (find_package(backplane))"
  cmake -S "$src/$dir" -B "$tmp/$dir" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-Werror" >"$tmp/$dir.log" 2>&1 &&
    cmake --build "$tmp/$dir" >>"$tmp/$dir.log" 2>&1 ||
    { cat "$tmp/$dir.log" >&2; echo "plugins/ci.sh: plugins/$dir does not build" >&2; exit 1; }
  so=$tmp/$dir/$file
  [ -f "$so" ] || { echo "plugins/ci.sh: $so was not built" >&2; exit 1; }
  command -v readelf >/dev/null || return 0
  case $(readelf -d "$so") in
    *NEEDED*libbackplane*)
      echo "plugins/ci.sh: $file links libbackplane; it must not" >&2
      exit 1 ;;
  esac
  local exported
  exported=$(readelf -W --dyn-syms "$so" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' | sort -u)
  if [ "$exported" != "$symbol" ]; then
    echo "plugins/ci.sh: $file exports '$(echo $exported)', wanted only $symbol" >&2
    exit 1
  fi
}

build_out_of_tree template bp_template.so bp_plugin_entry

echo "plugins/ci.sh: $tmp/prefix/bin/backplane conform --plugin bp_template.so --graph"
# Each case eagerly, then on a graph (its fused groups: the template has them).
# Neither the user's nor the system's configuration may change the verdict.
rc=0
env BP_CONFIG= XDG_CONFIG_HOME="$tmp/no-xdg" HOME="$tmp/no-home" BP_PLUGIN_PATH= \
    BP_DEFAULT_BACKEND= BP_LOG_LEVEL= \
    "$tmp/prefix/bin/backplane" conform --plugin "$so" --graph >"$tmp/conform.out" 2>"$tmp/conform.err" ||
  rc=$?
cat "$tmp/conform.out"
if [ "$rc" -ne 0 ]; then
  tail -n 40 "$tmp/conform.err" >&2
  echo "plugins/ci.sh: backplane conform failed on the template plugin (exit $rc)" >&2
  exit 1
fi
totals=$(grep -E '[0-9]+ passed, [0-9]+ failed, [0-9]+ unsupported, [0-9]+ crashed' \
         "$tmp/conform.out" | tail -n 1 || true)
passed=$(printf '%s\n' "$totals" | sed -nE 's/.*\b([0-9]+) passed,.*/\1/p')
if [ -z "$passed" ] || [ "$passed" -eq 0 ]; then
  echo "plugins/ci.sh: conform ran no passing case on the template ('$totals')" >&2
  exit 1
fi
echo "plugins/ci.sh: the template plugin passes conform out of tree ($totals)"

# The collective engine template, out of tree against the same installed copy.
build_out_of_tree comm_template comm_template.so bp_comm_engine_entry
echo "plugins/ci.sh: the engine template builds out of tree and exports only bp_comm_engine_entry"
