#!/usr/bin/env bash
# The sanitizer tests (ctest labels asan and tsan; the top CMakeLists.txt adds them):
#   run_sanitized.sh build  DIR KIND TARGET…     configure DIR (clang, -DRELAB_SANITIZE=KIND, tcmalloc
#                                                off) once, then build only TARGETs
#   run_sanitized.sh run    DIR KIND CMD…        run CMD; any sanitizer report fails
#   run_sanitized.sh expect DIR KIND PATTERN… -- CMD…
#                                                CMD must be stopped by a report that matches every
#                                                PATTERN (grep -E): the sanitizer catches what it should
#   run_sanitized.sh smoke  DIR KIND LAB…        relab run LAB… on the real backend, 2 runs each: any
#                                                report, a lab that does not hold or one skipped fails
# KIND is address (ASan and UBSan) or thread (TSan). Every process CMD starts inherits the options,
# and each writes its reports to a file of its own in a scratch log folder: a report of a role
# process counts as one of relab's. An argument @SCRATCH@ stands for a scratch folder; both are
# removed on exit.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
usage="usage: run_sanitized.sh build|run|expect|smoke DIR KIND …"
mode="${1:?$usage}"
dir="${2:?$usage}"
kind="${3:?$usage}"
shift 3
case "$kind" in
  address | thread) ;;
  *) echo "run_sanitized.sh: KIND is address or thread, not $kind" >&2; exit 2 ;;
esac

if [ "$mode" = build ]; then
  # shellcheck source=../clang_build.sh
  . "$src/harness/clang_build.sh"
  clang_build run_sanitized.sh "${RELAB_SANITIZE_CXX:-clang++}" "$src" "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRELAB_SANITIZE="$kind" -DRELAB_TCMALLOC=OFF -- "$@"
  exit $?
fi

scratch="$(mktemp -d "${TMPDIR:-/tmp}/relab-sanitize.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$scratch/logs" "$scratch/work"
logs="$scratch/logs"
# Stop at the first report, with a status no relab command uses, and write it where we look.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:exitcode=86:log_path=$logs/asan:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan:${UBSAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:exitcode=86:second_deadlock_stack=1:log_path=$logs/tsan:${TSAN_OPTIONS:-}"

# Runs its arguments, @SCRATCH@ replaced; the status is the command's.
run_cmd() {
  local args=()
  for a in "$@"; do args+=("${a//@SCRATCH@/$scratch/work}"); done
  "${args[@]}"
}

# Prints every report the logs hold; fails when there is one.
no_reports() {
  if compgen -G "$logs/*" >/dev/null; then
    for f in "$logs"/*; do
      echo "== sanitizer report in $(basename "$f"):" >&2
      head -n 80 "$f" >&2
    done
    return 1
  fi
}

case "$mode" in
  run)
    rc=0
    run_cmd "$@" || rc=$?
    no_reports || exit 1
    exit "$rc"
    ;;
  expect)
    patterns=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do patterns+=("$1"); shift; done
    shift
    rc=0
    run_cmd "$@" || rc=$?
    if [ "$rc" -eq 0 ] || ! compgen -G "$logs/*" >/dev/null; then
      echo "run_sanitized.sh: $* ran to its end (status $rc) with no sanitizer report: the $kind build misses it" >&2
      exit 1
    fi
    for p in "${patterns[@]}"; do
      if ! cat "$logs"/* | grep -qE "$p"; then
        echo "run_sanitized.sh: the report does not match '$p':" >&2
        cat "$logs"/* >&2
        exit 1
      fi
    done
    echo "the $kind build stopped it (status $rc), its report matching: ${patterns[*]}"
    ;;
  smoke)
    [ $# -gt 0 ] || { echo "run_sanitized.sh smoke: name the labs" >&2; exit 2; }
    rc=0
    "$dir/relab" run "$@" --backend real --runs 2 --quiet --json "$scratch/work/run.json" || rc=$?
    no_reports || exit 1
    if [ "$rc" -ne 0 ]; then echo "run_sanitized.sh: relab run $* exited $rc" >&2; exit 1; fi
    skipped="$(grep -cE '"skipped": *true' "$scratch/work/run.json")"
    if [ "$skipped" -ne 0 ]; then
      echo "run_sanitized.sh: $skipped lab(s) skipped: a skip fails the smoke ($(grep -oE '"skip_reason": *"[^"]+"' \
           "$scratch/work/run.json" | head -n 3))" >&2
      exit 1
    fi
    echo "smoke: $# lab(s) held on the real backend, none skipped, no report"
    ;;
  *) echo "run_sanitized.sh: unknown mode $mode" >&2; exit 2 ;;
esac
