#pragma once

// One source's queue of 5-tuples by due time, for ContinuousTracer. A sorted
// vector with a moving head: a 5-tuple is queued at `now` (new to the pool)
// or `now + refresh_period` (traced), so it almost always goes at the back,
// and what leaves is almost always the head (the trace handed out). Only a
// 5-tuple leaving the pool, or brought forward by a lost probe, moves from
// the middle. A tree of nodes did the
// same with a cache miss per level on every trace (a host has 896 5-tuples).

#include <algorithm>
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include "common/base/clock.h"
#include "tracer/ipv4.h"

namespace hostmesh::tracer {

// `Value` rides along (the tracer's entry, so a head needs no lookup); the
// order is by due time, then 5-tuple.
template <typename Value>
class DueQueue {
 public:
  struct Item {
    MonoTime due;
    FiveTuple tuple;
    Value value{};
    bool operator<(const Item& o) const { return std::tie(due, tuple) < std::tie(o.due, o.tuple); }
    bool SameKey(const Item& o) const { return due == o.due && tuple == o.tuple; }
    friend bool operator==(const Item&, const Item&) = default;
  };

  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  const Item& front() const { return items_[head_]; }

  void Insert(const Item& item) {
    if (empty()) {
      items_.clear();
      head_ = 0;
      items_.push_back(item);
    } else if (items_.back() < item) {
      items_.push_back(item);
    } else if (head_ > 0 && item < items_[head_]) {
      items_[--head_] = item;
    } else {
      items_.insert(std::upper_bound(items_.begin() + Head(), items_.end(), item), item);
    }
  }

  // Erases the item of this due time and 5-tuple if queued.
  void Erase(MonoTime due, const FiveTuple& tuple) {
    const Item key{due, tuple, Value{}};
    const auto it = std::lower_bound(items_.begin() + Head(), items_.end(), key);
    if (it == items_.end() || !it->SameKey(key)) return;
    if (it == items_.begin() + Head()) {
      ++head_;
    } else {
      items_.erase(it);
    }
    // A drained queue gives its memory back: the tracer's queue of new
    // 5-tuples holds a whole pool on the first pass and little after.
    if (empty() && items_.capacity() > kKeptWhenEmpty) {
      items_ = std::vector<Item>();  // `= {}` would keep the capacity
      head_ = 0;
      return;
    }
    // The erased head's slots are reclaimed once they are most of the vector.
    if (head_ > 16 && head_ * 2 > items_.size()) {
      items_.erase(items_.begin(), items_.begin() + Head());
      head_ = 0;
    }
  }

  // The first item due strictly after `t`; null when none.
  const Item* FirstAfter(MonoTime t) const {
    const auto it = std::upper_bound(items_.begin() + Head(), items_.end(), t,
                                     [](MonoTime at, const Item& i) { return at < i.due; });
    return it == items_.end() ? nullptr : &*it;
  }

  std::size_t capacity() const { return items_.capacity(); }

 private:
  static constexpr std::size_t kKeptWhenEmpty = 64;
  std::ptrdiff_t Head() const { return static_cast<std::ptrdiff_t>(head_); }

  std::vector<Item> items_;
  std::size_t head_ = 0;  // items_[0, head_) have left
};

// For unordered containers of 5-tuples.
struct FiveTupleHash {
  // noexcept: unordered containers then keep no copy of the hash per node.
  std::size_t operator()(const FiveTuple& t) const noexcept {
    std::uint64_t k = (std::uint64_t{t.src.value} << 32 | t.dst.value) ^
                      ((std::uint64_t{t.sport} << 24 | std::uint64_t{t.dport} << 8 | t.protocol) *
                       0x9E3779B97F4A7C15ULL);
    k ^= k >> 29;
    k *= 0xBF58476D1CE4E5B9ULL;
    k ^= k >> 32;
    return static_cast<std::size_t>(k);
  }
};

}  // namespace hostmesh::tracer
