// What every fuzz target shares: a check whose failure is a crash libFuzzer
// records (an input that breaks a decoder's promise, not only its memory).
#pragma once

#include <cstdio>
#include <cstdlib>

// Aborts with the condition and its place when `cond` is false.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (false)
