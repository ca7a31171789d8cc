# Writes OUTPUT: one add_test per TEST_CASE of the Catch2 EXECUTABLE, named
# "PREFIX: case" (see gpusched_catch_tests in tests/CMakeLists.txt). Case
# names may hold ';', which CMake lists would split, so the listing is
# walked line by line and every name is written in bracket arguments.
execute_process(
  COMMAND "${EXECUTABLE}" --list-test-names-only
  OUTPUT_VARIABLE listing
  RESULT_VARIABLE result
  WORKING_DIRECTORY "${WORKING_DIR}")
# Catch2 v2 exits with the number of cases listed: only a crash is an error.
if(NOT result MATCHES "^[0-9]+$")
  message(FATAL_ERROR "listing the cases of ${EXECUTABLE} failed: ${result}\n${listing}")
endif()

set(script "")
set(rest "${listing}")
while(NOT rest STREQUAL "")
  string(FIND "${rest}" "\n" end)
  if(end EQUAL -1)
    set(name "${rest}")
    set(rest "")
  else()
    string(SUBSTRING "${rest}" 0 ${end} name)
    math(EXPR next "${end} + 1")
    string(SUBSTRING "${rest}" ${next} -1 rest)
  endif()
  string(STRIP "${name}" name)
  if(name STREQUAL "")
    continue()
  endif()
  # As a test spec, Catch2 reads , [ ] ~ and \ as syntax: escaped, the
  # name matches only itself; and should it match nothing, --warn NoTests
  # fails the test rather than pass it having run nothing.
  set(spec "${name}")
  foreach(char \\ , [ ] ~)
    string(REPLACE "${char}" "\\${char}" spec "${spec}")
  endforeach()
  # A leading - would be read as an option.
  if(spec MATCHES "^-")
    set(spec "\\${spec}")
  endif()
  string(APPEND script
    "add_test([==[${PREFIX}: ${name}]==] [==[${EXECUTABLE}]==] [==[${spec}]==] --warn NoTests)\n"
    "set_tests_properties([==[${PREFIX}: ${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIR}]==] "
    "TIMEOUT ${TIMEOUT} SKIP_RETURN_CODE 77)\n")
endwhile()
file(WRITE "${OUTPUT}" "${script}")
