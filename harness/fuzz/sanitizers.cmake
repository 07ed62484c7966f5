# Included by the top CMakeLists.txt when RELAB_FUZZ is on, before the layers the fuzz targets
# reach are defined: every object of the fuzz build gets AddressSanitizer, UBSan (aborting on its
# first report, so libFuzzer keeps the input as a crash) and libFuzzer's coverage counters.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "RELAB_FUZZ needs clang and libFuzzer: cmake -S . -B build-fuzz -G Ninja -DRELAB_FUZZ=ON "
                      "-DCMAKE_CXX_COMPILER=clang++ (Debian: apt-get install clang libclang-rt-14-dev)")
endif()
# -O1 and line tables after the build type's flags, so they win: a quicker compile than -O2, and
# sanitizer reports still name file and line (-O0 compiles 4 times faster, but the targets then
# run 6 to 7 times slower). clang warns where g++ does not; warnings are errors in the g++ build
# only.
add_compile_options(-O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=address,undefined
                    -fno-sanitize-recover=all -fsanitize=fuzzer-no-link -Wno-error)
add_link_options(-fsanitize=address,undefined)
# The renderers no fuzz target reaches stay out of the fuzz build: the report layer is most of its
# compile time. A link error naming one of them means a target now needs it: take it off the list.
# An entry is a file's name without .cpp, or a pattern of them: html/[a-z_]+ is the HTML report.
set(RELAB_LAYER_SKIP_relab_report html/[a-z_]+ json_reporter junit_reporter load_table markdown_reporter)
