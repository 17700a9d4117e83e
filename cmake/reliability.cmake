# Reliability builds (docs/reliability.md). Each is its own build directory:
#   -DBP_FUZZ=ON        libFuzzer harnesses (tests/fuzz); clang; the library and
#                       plugins get -fsanitize=fuzzer-no-link,address,undefined
#   -DBP_TSAN=ON        ThreadSanitizer stress test (tests/stress); clang
#   -DBP_ALLOC_SWEEP=ON allocation-failure sweep (tests/alloc); meant for the
#                       BP_SANITIZE=ON (GCC ASan) build, whose libasan is dynamic
#   -DBP_LOADER_FILES=ON broken files in a plugin directory (tests/loader_files),
#                       also meant for the BP_SANITIZE=ON build
option(BP_FUZZ "Build the libFuzzer harnesses (clang, ASan + UBSan)" OFF)
option(BP_TSAN "Build with ThreadSanitizer and the stress test (clang)" OFF)
option(BP_ALLOC_SWEEP "Build the allocation-failure sweep (with BP_SANITIZE=ON)" OFF)
option(BP_LOADER_FILES "Build the broken-plugin-files check (with BP_SANITIZE=ON)" OFF)

if(BP_FUZZ OR BP_TSAN)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BP_FUZZ / BP_TSAN need clang: configure with -DCMAKE_C_COMPILER=clang "
                        "(GCC has no libFuzzer, and its TSan crashes on blas_cpu's ifunc resolvers)")
  endif()
  if(BP_SANITIZE OR (BP_FUZZ AND BP_TSAN))
    message(FATAL_ERROR "BP_FUZZ, BP_TSAN and BP_SANITIZE each need a build directory of their own")
  endif()
endif()
if(BP_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()
if(BP_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=thread)
endif()

# clang links a sanitizer runtime only into executables: a plugin's (or the
# library's) references to it stay undefined until the program loads it, so
# bp_add_plugin's -Wl,--no-undefined is relaxed here (the last -z wins).
function(bp_sanitized_plugin target)
  if(TARGET ${target})
    set_property(TARGET ${target} APPEND PROPERTY LINK_OPTIONS -Wl,-z,undefs)
  endif()
endfunction()
