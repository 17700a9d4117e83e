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

echo "plugins/ci.sh: building plugins/template out of tree (find_package(backplane))"
cmake -S "$src/template" -B "$tmp/template" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-Werror" >"$tmp/build.log" 2>&1 &&
  cmake --build "$tmp/template" >>"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; echo "plugins/ci.sh: the template does not build" >&2; exit 1; }
so=$tmp/template/bp_template.so
[ -f "$so" ] || { echo "plugins/ci.sh: $so was not built" >&2; exit 1; }

# The ABI rules a linker can check: one exported symbol, no libbackplane.
if command -v readelf >/dev/null; then
  case $(readelf -d "$so") in
    *NEEDED*libbackplane*)
      echo "plugins/ci.sh: bp_template.so links libbackplane; a plugin must not" >&2
      exit 1 ;;
  esac
  exported=$(readelf -W --dyn-syms "$so" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' | sort -u)
  if [ "$exported" != bp_plugin_entry ]; then
    echo "plugins/ci.sh: bp_template.so exports '$(echo $exported)', wanted only bp_plugin_entry" >&2
    exit 1
  fi
fi

echo "plugins/ci.sh: $tmp/prefix/bin/backplane conform --plugin bp_template.so"
# Neither the user's nor the system's configuration may change the verdict.
rc=0
env BP_CONFIG= XDG_CONFIG_HOME="$tmp/no-xdg" HOME="$tmp/no-home" BP_PLUGIN_PATH= \
    BP_DEFAULT_BACKEND= BP_LOG_LEVEL= \
    "$tmp/prefix/bin/backplane" conform --plugin "$so" >"$tmp/conform.out" 2>"$tmp/conform.err" ||
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
echo "plugins/ci.sh: building plugins/comm_template out of tree (find_package(backplane))"
cmake -S "$src/comm_template" -B "$tmp/comm_template" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-Werror" >"$tmp/comm.log" 2>&1 &&
  cmake --build "$tmp/comm_template" >>"$tmp/comm.log" 2>&1 ||
  { cat "$tmp/comm.log" >&2; echo "plugins/ci.sh: the engine template does not build" >&2; exit 1; }
so=$tmp/comm_template/comm_template.so
[ -f "$so" ] || { echo "plugins/ci.sh: $so was not built" >&2; exit 1; }
if command -v readelf >/dev/null; then
  case $(readelf -d "$so") in
    *NEEDED*libbackplane*)
      echo "plugins/ci.sh: comm_template.so links libbackplane; an engine must not" >&2
      exit 1 ;;
  esac
  exported=$(readelf -W --dyn-syms "$so" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' | sort -u)
  if [ "$exported" != bp_comm_engine_entry ]; then
    echo "plugins/ci.sh: comm_template.so exports '$(echo $exported)', wanted only bp_comm_engine_entry" >&2
    exit 1
  fi
fi
echo "plugins/ci.sh: the engine template builds out of tree and exports only bp_comm_engine_entry"
