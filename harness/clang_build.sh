# Sourced by harness/fuzz/run_fuzz.sh and harness/sanitize/run_sanitized.sh: configures (once) and
# builds a clang build directory of its own beside build/.
#   clang_build WHO CXX SRC DIR [CMAKE_ARG…] -- [TARGET…]
clang_build() {
  local who=$1 cxx=$2 src=$3 dir=$4
  shift 4
  local args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  if ! command -v "$cxx" >/dev/null; then
    echo "$who: no $cxx: this build needs clang and its runtimes (Debian: apt-get install clang" \
         "libclang-rt-14-dev; ./run_labs.sh test installs them)" >&2
    return 1
  fi
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$dir" "${generator[@]}" "${args[@]}" -DCMAKE_CXX_COMPILER="$cxx" || return 1
  fi
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
}
