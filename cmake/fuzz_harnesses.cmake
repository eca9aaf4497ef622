# The harness names of fuzz/harnesses (one line each: NAME RUNS [DICTIONARY]),
# for the libFuzzer build and the regression replay of the normal build.
function(hta_fuzz_harnesses out)
  file(STRINGS ${PROJECT_SOURCE_DIR}/fuzz/harnesses lines REGEX "^[a-z]")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^[a-z0-9_]+" name "${line}")
    list(APPEND names ${name})
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/harnesses)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# HTA_FUZZ_HARNESS(name) once per harness, in a header at path.
function(hta_fuzz_harness_list path)
  hta_fuzz_harnesses(names)
  set(text "/* Generated from fuzz/harnesses. */\n")
  foreach(name IN LISTS names)
    string(APPEND text "HTA_FUZZ_HARNESS(${name})\n")
  endforeach()
  file(CONFIGURE OUTPUT ${path} CONTENT "${text}")
endfunction()

# The target functions every harness binary and the replay link.
set(HTA_FUZZ_TARGET_SOURCES ${PROJECT_SOURCE_DIR}/fuzz/targets.c
    ${PROJECT_SOURCE_DIR}/fuzz/input_targets.c ${PROJECT_SOURCE_DIR}/fuzz/fr_dump_target.c
    ${PROJECT_SOURCE_DIR}/fuzz/checks.c)
