#!/usr/bin/env bash
# The fuzz tests (ctest label fuzz; the top CMakeLists.txt adds them):
#   run_fuzz.sh build  FUZZ_BUILD_DIR           configure (clang, -DRELAB_FUZZ=ON) and build the targets
#   run_fuzz.sh replay FUZZ_BUILD_DIR [TARGET…]  run every seed and regression input once
#   run_fuzz.sh fuzz   FUZZ_BUILD_DIR SECONDS [TARGET…]
#                                               fuzz each target for SECONDS, all targets at once, on a
#                                               scratch copy of its seeds (a temp dir, removed after)
# Targets: scenario_loader and report_reader (default: both). A target's seeds are
# harness/fuzz/corpus/TARGET/ and harness/fuzz/regressions/TARGET/, and for scenario_loader every
# file in scenarios/ and scenarios/load/ too. Any crash, sanitizer report, leak, timeout (10 s an
# input) or out-of-memory fails: libFuzzer exits non-zero, and the input it saved is copied to
# FUZZ_BUILD_DIR/fuzz-artifacts/TARGET/ (fix the bug, then add the input to regressions/TARGET/).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
mode="${1:?usage: run_fuzz.sh build|replay|fuzz FUZZ_BUILD_DIR [SECONDS] [TARGET…]}"
dir="${2:?usage: run_fuzz.sh build|replay|fuzz FUZZ_BUILD_DIR [SECONDS] [TARGET…]}"
shift 2

# UBSan already aborts (-fno-sanitize-recover); print its stack too. An input may take 10 s, and
# a target 2 GB (libFuzzer's default; the loaders hold a few MB).
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
fuzz_flags=(-timeout=10 -rss_limit_mb=2048)

if [ "$mode" = build ]; then
  # shellcheck source=../clang_build.sh
  . "$src/harness/clang_build.sh"
  clang_build run_fuzz.sh "${RELAB_FUZZ_CXX:-clang++}" "$src" "$dir" -DRELAB_FUZZ=ON --
  exit $?
fi

targets=()
seconds=0
if [ "$mode" = fuzz ]; then
  seconds="${1:?run_fuzz.sh fuzz FUZZ_BUILD_DIR SECONDS [TARGET…]}"
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(scenario_loader report_reader)

# The seed files of a target, one a line.
seeds() {
  local t="$1"
  for d in "$here/corpus/$t" "$here/regressions/$t"; do
    [ -d "$d" ] && find "$d" -type f
  done
  if [ "$t" = scenario_loader ]; then
    find "$src/scenarios" -type f -name '*.json'
  fi
}

for t in "${targets[@]}"; do
  if [ ! -x "$dir/harness/fuzz/${t}_fuzz" ]; then
    echo "run_fuzz.sh: $dir/harness/fuzz/${t}_fuzz is not built (run_fuzz.sh build $dir)" >&2
    exit 1
  fi
done

if [ "$mode" = replay ]; then
  status=0
  for t in "${targets[@]}"; do
    mapfile -t files < <(seeds "$t" | sort)
    echo "== $t: ${#files[@]} inputs, each once"
    if ! "$dir/harness/fuzz/${t}_fuzz" "${fuzz_flags[@]}" "${files[@]}" >"$dir/replay-$t.log" 2>&1; then
      echo "run_fuzz.sh: $t failed on one of its seeds or regressions; the end of $dir/replay-$t.log:" >&2
      tail -n 60 "$dir/replay-$t.log" >&2
      status=1
    else
      grep -c '^Executed ' "$dir/replay-$t.log" | sed "s/^/   executed: /"
    fi
  done
  exit "$status"
fi

[ "$mode" = fuzz ] || { echo "run_fuzz.sh: unknown mode $mode" >&2; exit 2; }

# A scratch copy of the seeds, so that what libFuzzer adds to its corpus never lands in the
# checkout; removed on exit, the fuzzers stopped first if this script is.
scratch="$(mktemp -d "${TMPDIR:-/tmp}/relab-fuzz.XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
  n=0
  while IFS= read -r f; do
    cp "$f" "$scratch/$t/corpus/seed-$n-$(basename "$f")"
    n=$((n + 1))
  done < <(seeds "$t")
  dict=()
  [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
  echo "== $t: fuzzing ${seconds} s from $n seeds"
  "$dir/harness/fuzz/${t}_fuzz" "${fuzz_flags[@]}" "${dict[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$scratch/$t/artifacts/" "$scratch/$t/corpus" >"$scratch/$t/log" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!targets[@]}"; do
  t="${targets[$i]}"
  rc=0
  wait "${pids[$i]}" || rc=$?
  stats="$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$scratch/$t/log" |
           sed 's/^stat:://' | tr '\n' ' ')"
  if [ "$rc" -eq 0 ]; then
    echo "== $t: ok: $stats"
  else
    status=1
    echo "== $t: FAILED (libFuzzer exit $rc): $stats" >&2
    grep -nE 'ERROR: |SUMMARY: |runtime error|terminate called|what\(\)|escaped the|Test unit written' "$scratch/$t/log" | head -n 20 >&2
    echo "-- the end of its log:" >&2
    tail -n 60 "$scratch/$t/log" >&2
    if compgen -G "$scratch/$t/artifacts/*" >/dev/null; then
      mkdir -p "$dir/fuzz-artifacts/$t"
      cp "$scratch/$t/artifacts/"* "$dir/fuzz-artifacts/$t/"
      echo "-- the input is in $dir/fuzz-artifacts/$t/ (reproduce: $dir/harness/fuzz/${t}_fuzz FILE;" \
           "once fixed, add it to harness/fuzz/regressions/$t/)" >&2
    fi
  fi
done
pids=()
exit "$status"
