#pragma once

// Every fuzz target defines the libFuzzer entry point. Built with clang and
// GPUSCHED_FUZZ=ON it links against libFuzzer (tests/fuzz/run.sh); otherwise
// against replay_main.cc, which feeds it the saved corpus so that the normal
// test run replays every input that once crashed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// A broken invariant is a crash, so that the fuzzer keeps the input.
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
