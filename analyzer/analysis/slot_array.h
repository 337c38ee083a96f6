#pragma once

// A fixed-size array of trivially copyable slots for the open-addressing tables
// (FlatMap, AgingMap). One of at least 2 MiB is allocated on a 2 MiB boundary
// and advised to the kernel as huge pages before it is first written: a table
// of millions of slots looked up at random otherwise misses the TLB on nearly
// every lookup (4 KiB pages), which costs more than the cache miss itself.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace hostmesh::analysis {

template <typename T>
class SlotArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  SlotArray() = default;
  SlotArray(std::size_t n, const T& fill) : size_(n) {
    if (n == 0) return;
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePage) {
      const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      data_ = static_cast<T*>(std::aligned_alloc(kHugePage, rounded));
#ifdef __linux__
      // A hint: without transparent huge pages the array works the same.
      if (data_ != nullptr) madvise(data_, rounded, MADV_HUGEPAGE);
#endif
    } else {
      data_ = static_cast<T*>(std::malloc(bytes));
    }
    if (data_ == nullptr) throw std::bad_alloc();
    std::uninitialized_fill_n(data_, n, fill);
  }
  SlotArray(const SlotArray& other) : SlotArray(other.size_, T{}) {
    std::copy_n(other.data_, size_, data_);
  }
  SlotArray(SlotArray&& other) noexcept {
    swap(other);
  }
  SlotArray& operator=(SlotArray other) noexcept {
    swap(other);
    return *this;
  }
  ~SlotArray() {
    std::free(data_);
  }

  void swap(SlotArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }

  T& operator[](std::size_t i) {
    return data_[i];
  }
  const T& operator[](std::size_t i) const {
    return data_[i];
  }
  T* data() {
    return data_;
  }
  const T* data() const {
    return data_;
  }
  T* begin() {
    return data_;
  }
  T* end() {
    return data_ + size_;
  }
  const T* begin() const {
    return data_;
  }
  const T* end() const {
    return data_ + size_;
  }
  std::size_t size() const {
    return size_;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace hostmesh::analysis
