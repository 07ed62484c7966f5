# Included by the top CMakeLists.txt when RELAB_SANITIZE is set, before any layer is defined: every
# object of the build gets the sanitizer, and the build's test targets are harness/sanitize/'s.
#   address  AddressSanitizer and UndefinedBehaviorSanitizer, stopping at the first report
#   thread   ThreadSanitizer
# -O1 and line tables after the build type's flags, so they win: a quicker compile than -O2 with
# reports that still name file and line. clang warns where g++ does not; warnings are errors in
# the g++ build only.
if(RELAB_SANITIZE STREQUAL "address")
  set(relab_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=all)
elseif(RELAB_SANITIZE STREQUAL "thread")
  set(relab_sanitize_flags -fsanitize=thread)
else()
  message(FATAL_ERROR "RELAB_SANITIZE must be address or thread, not ${RELAB_SANITIZE}")
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(relab_sanitize_debug -gline-tables-only)
else()
  set(relab_sanitize_debug -g1)
endif()
add_compile_options(-O1 ${relab_sanitize_debug} -fno-omit-frame-pointer ${relab_sanitize_flags} -Wno-error)
add_link_options(${relab_sanitize_flags})
# tcmalloc replaces malloc, which the sanitizers intercept themselves: off here, and refused if asked for.
if(RELAB_TCMALLOC)
  message(FATAL_ERROR "RELAB_SANITIZE and RELAB_TCMALLOC exclude each other: configure with -DRELAB_TCMALLOC=OFF")
endif()
set(RELAB_TCMALLOC OFF CACHE BOOL "link relab with tcmalloc_minimal when it is installed")
