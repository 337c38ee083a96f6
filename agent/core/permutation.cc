#include "agent/core/permutation.h"

#include <stdexcept>

#include "agent/core/rng.h"

namespace hostmesh::agent {

Permutation::Permutation(std::uint32_t n, std::uint64_t key) : n_(n), half_bits_(1) {
  if (n == 0) throw std::invalid_argument("Permutation: empty domain");
  while ((std::uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t k = key;
  for (std::uint64_t& round_key : round_keys_) {
    k = Mix64(k);
    round_key = k;
  }
}

std::uint64_t Permutation::Encrypt(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const std::uint64_t round_key : round_keys_) {
    const std::uint64_t next = left ^ (Mix64(right ^ round_key) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint32_t Permutation::operator()(std::uint32_t index) const {
  // Cycle walking: the Feistel network permutes the whole power-of-two domain,
  // so following the cycle from a value below n reaches another value below n;
  // the domain is < 4n, so this takes fewer than 4 steps on average.
  std::uint64_t x = index;
  do {
    x = Encrypt(x);
  } while (x >= n_);
  return static_cast<std::uint32_t>(x);
}

}  // namespace hostmesh::agent
