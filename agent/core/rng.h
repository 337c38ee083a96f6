#pragma once

#include <cstdint>

namespace hostmesh::agent {

// SplitMix64's output function: a bijective 64-bit mixer, used to derive
// independent per-NIC seeds from one injected seed.
constexpr std::uint64_t Mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The pure core's random source: SplitMix64, seeded by the caller (main seeds
// it from std::random_device, tests with a constant). We do not use
// std::uniform_int_distribution because its output differs between standard
// libraries, and seeded tests must replay exactly everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound); 0 when bound is 0. Rejects the top sliver of the
  // 64-bit range so that no value is favoured (modulo bias).
  std::uint64_t Below(std::uint64_t bound) {
    if (bound == 0) return 0;
    const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    for (;;) {
      const std::uint64_t r = Next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  std::uint64_t state_;
};

}  // namespace hostmesh::agent
