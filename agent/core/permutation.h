#pragma once

#include <array>
#include <cstdint>

namespace hostmesh::agent {

// A seeded bijection of [0, n), computed on demand in O(1) memory: a 4-round
// Feistel network over the smallest even-bit power of two >= n, with cycle
// walking to stay inside [0, n). Walking i = 0, 1, ..., n-1 visits every value
// once in a key-dependent order, without storing a shuffled table (a shuffled
// copy of the 16k-port range per NIC would cost more than the rest of the agent).
class Permutation {
 public:
  // n >= 1; n <= 2^32 - 1 is plenty (UDP ports are 16 bits).
  Permutation(std::uint32_t n, std::uint64_t key);

  // The image of `index`, which must be < size().
  std::uint32_t operator()(std::uint32_t index) const;
  std::uint32_t size() const { return n_; }

 private:
  std::uint64_t Encrypt(std::uint64_t x) const;

  std::uint32_t n_;
  unsigned half_bits_;
  std::uint64_t half_mask_;
  std::array<std::uint64_t, 4> round_keys_;
};

}  // namespace hostmesh::agent
