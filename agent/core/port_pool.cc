#include "agent/core/port_pool.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hostmesh::agent {
namespace {

std::uint64_t EpochKey(std::uint64_t seed, std::uint64_t epoch) {
  return Mix64(seed ^ Mix64(epoch));
}

PortPoolOptions Validated(PortPoolOptions options) {
  std::sort(options.allowed_ports.begin(), options.allowed_ports.end());
  options.allowed_ports.erase(
      std::unique(options.allowed_ports.begin(), options.allowed_ports.end()),
      options.allowed_ports.end());
  if (options.pool_size == 0) throw std::invalid_argument("port pool: pool_size must be >= 1");
  if (options.min_port > options.max_port) {
    throw std::invalid_argument("port pool: min_port must not exceed max_port");
  }
  if (options.rotation_period <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("port pool: rotation_period must be positive");
  }
  if (!(options.rotation_fraction >= 0.0 && options.rotation_fraction <= 1.0)) {
    throw std::invalid_argument("port pool: rotation_fraction must be in [0, 1]");
  }
  if (options.usage_window <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("port pool: usage_window must be positive");
  }
  return options;
}

}  // namespace

PortPool::PortPool(const PortPoolOptions& options, std::uint32_t num_nics, MonoTime start,
                   std::uint64_t seed)
    : options_(Validated(options)),
      num_nics_(num_nics),
      range_size_(options_.allowed_ports.empty()
                      ? std::uint32_t{options.max_port} - options.min_port + 1
                      : static_cast<std::uint32_t>(options_.allowed_ports.size())),
      replace_count_(0),
      seed_(seed),
      permutation_(range_size_, EpochKey(seed, 0)),
      next_rotation_(start + options.rotation_period) {
  const std::uint32_t size = std::min(options.pool_size, range_size_);
  const auto wanted = std::llround(options.rotation_fraction * static_cast<double>(size));
  replace_count_ = static_cast<std::uint32_t>(std::clamp<long long>(wanted, 1, size));

  const auto window_periods = options.usage_window / options.rotation_period;
  history_capacity_ = static_cast<std::size_t>(
      std::min<long long>(window_periods + 2, static_cast<long long>(kMaxHistoryGenerations)));
  mask_words_ = (size + 63) / 64;
  history_start_.resize(history_capacity_);
  history_ports_.resize(history_capacity_ * size);
  history_used_.resize(history_capacity_ * num_nics_ * mask_words_);

  ports_.reserve(size);
  while (ports_.size() < size) ports_.push_back(NextUnusedPort());
  RecordGeneration(start);
}

std::uint16_t PortPool::PortAt(std::uint32_t index) const {
  if (!options_.allowed_ports.empty()) return options_.allowed_ports[index];
  return static_cast<std::uint16_t>(options_.min_port + index);
}

std::uint16_t PortPool::NextUnusedPort() {
  Walk walk{walk_epoch_, walk_index_, permutation_};
  const std::uint16_t port = NextUnusedPort(walk, ports_);
  walk_epoch_ = walk.epoch;
  walk_index_ = walk.index;
  permutation_ = walk.permutation;
  ++ports_introduced_;
  return port;
}

std::uint16_t PortPool::NextUnusedPort(Walk& walk, std::span<const std::uint16_t> pool) const {
  // Terminates: callers keep the pool smaller than the range, so some port of
  // every permutation is outside it.
  for (;;) {
    if (walk.index == range_size_) {
      ++walk.epoch;
      walk.index = 0;
      walk.permutation = Permutation(range_size_, EpochKey(seed_, walk.epoch));
    }
    const std::uint16_t port = PortAt(walk.permutation(walk.index++));
    // Only at the start of a new walk can the pool already hold the port.
    if (std::find(pool.begin(), pool.end(), port) == pool.end()) return port;
  }
}

std::vector<std::uint16_t> PortPool::NextRotationPorts() const {
  std::vector<std::uint16_t> fresh;
  if (range_size_ <= ports_.size()) return fresh;
  Walk walk{walk_epoch_, walk_index_, permutation_};
  std::vector<std::uint16_t> pool = ports_;
  std::size_t oldest = oldest_slot_;
  for (std::uint32_t i = 0; i < replace_count_; ++i) {
    const std::uint16_t port = NextUnusedPort(walk, pool);  // as Rotate draws them
    pool[oldest] = port;
    oldest = (oldest + 1) % pool.size();
    fresh.push_back(port);
  }
  return fresh;
}

void PortPool::Advance(MonoTime now) {
  const auto period = options_.rotation_period;
  const long long due = (now - next_rotation_) / period + 1;
  // Beyond this many rotations every slot is new anyway; skipping the rest
  // keeps a stalled or suspended process from spinning through them.
  const long long renew_all = (static_cast<long long>(ports_.size()) + replace_count_ - 1) /
                              static_cast<long long>(replace_count_);
  if (due > renew_all) next_rotation_ += (due - renew_all) * period;
  while (next_rotation_ <= now) {
    Rotate(next_rotation_);
    next_rotation_ += period;
  }
}

void PortPool::Rotate(MonoTime at) {
  if (range_size_ <= ports_.size()) return;  // the pool is the whole range: nothing to rotate in
  for (std::uint32_t i = 0; i < replace_count_; ++i) {
    // Drawn before the old port leaves, so a port never replaces itself.
    const std::uint16_t fresh = NextUnusedPort();
    ports_[oldest_slot_] = fresh;
    oldest_slot_ = (oldest_slot_ + 1) % ports_.size();
  }
  ++generation_;
  RecordGeneration(at);
}

void PortPool::RecordGeneration(MonoTime start) {
  const std::size_t index = HistoryIndex(generation_);
  history_start_[index] = start;
  std::copy(ports_.begin(), ports_.end(),
            history_ports_.begin() + static_cast<std::ptrdiff_t>(index * ports_.size()));
  const std::size_t stride = std::size_t{num_nics_} * mask_words_;
  std::fill_n(history_used_.begin() + static_cast<std::ptrdiff_t>(index * stride), stride, 0);
}

std::uint16_t PortPool::Draw(NicId dst, Rng& rng) {
  const auto slot = static_cast<std::size_t>(rng.Below(ports_.size()));
  if (dst < num_nics_) {
    const std::size_t word = HistoryIndex(generation_) * num_nics_ * mask_words_ +
                             std::size_t{dst} * mask_words_ + slot / 64;
    history_used_[word] |= std::uint64_t{1} << (slot % 64);
  }
  return ports_[slot];
}

std::size_t PortPool::DistinctPortsUsed(NicId dst, MonoTime now) const {
  if (dst >= num_nics_) return 0;
  const MonoTime window_start = now - options_.usage_window;
  const std::size_t size = ports_.size();
  // Walked from the newest generation back, a slot keeps one port for a run of
  // generations (a stint: ports never move between slots), which counts once
  // if any generation of it in the window drew it. Per (generation, slot) that
  // is a compare and a bit test: no list of every use to sort (an hour of
  // history is 60 generations).
  stint_port_.assign(ports_.begin(), ports_.end());
  stint_used_.assign(size, 0);
  seen_.clear();
  MonoTime end = now;  // the current generation lasts until now
  for (std::uint64_t back = 0; back < history_capacity_ && back <= generation_; ++back) {
    if (end <= window_start) break;
    const std::size_t index = HistoryIndex(generation_ - back);
    const std::uint16_t* ports = history_ports_.data() + index * size;
    const std::uint64_t* used =
        history_used_.data() + index * num_nics_ * mask_words_ + std::size_t{dst} * mask_words_;
    for (std::size_t slot = 0; slot < size; ++slot) {
      if (ports[slot] != stint_port_[slot]) {
        if (stint_used_[slot] != 0) seen_.push_back(stint_port_[slot]);
        stint_port_[slot] = ports[slot];
        stint_used_[slot] = 0;
      }
      stint_used_[slot] |= static_cast<std::uint8_t>((used[slot / 64] >> (slot % 64)) & 1U);
    }
    end = history_start_[index];
  }
  for (std::size_t slot = 0; slot < size; ++slot) {
    if (stint_used_[slot] != 0) seen_.push_back(stint_port_[slot]);
  }
  // A port re-enters the pool only after a walk of the whole range: two stints
  // of one port within the history need a range smaller than what it brings in.
  if (range_size_ <= size + history_capacity_ * replace_count_) {
    std::sort(seen_.begin(), seen_.end());
    seen_.erase(std::unique(seen_.begin(), seen_.end()), seen_.end());
  }
  return seen_.size();
}

}  // namespace hostmesh::agent
