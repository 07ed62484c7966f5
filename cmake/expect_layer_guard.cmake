# ctest layer_guard: building relab_layer_guard_check (a role file that includes hiredis) must fail,
# and fail because of the guard (a poisoned identifier), not for some other reason.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} --target relab_layer_guard_check
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a role file that includes hiredis compiled: the layer guard is off")
endif()
string(FIND "${out}${err}" "poisoned" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the guard check failed, but not on a poisoned identifier:\n${out}${err}")
endif()
message(STATUS "the roles layer refused hiredis: ok")
