#!/usr/bin/env bash
# ctest entry "docs_speak_to_users": what a user reads (README, docs/, the
# example configuration, the plugin guide and template, the examples, the
# benchmarks' scripts and output, the tools and their messages) names no
# internal issue numbers ("issue 14 targets"): each says what it means.
# usage: no_internal_references.sh SOURCE_DIR
set -u
src=$1
cd "$src" || exit 1
found=$(grep -rnEi '\bissues? #?[0-9]+' README.md docs conf plugins examples bench tools 2>/dev/null)
if [ -n "$found" ]; then
  echo "not ok - internal issue numbers where users read them; say what they mean instead:"
  printf '%s\n' "$found" | sed 's/^/    /'
  exit 1
fi
echo "ok - README.md, docs/, conf/, plugins/, examples/, bench/ and tools/ name no issue numbers"
