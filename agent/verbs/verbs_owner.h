#pragma once

// A move-only owner of one C handle, released by a deleter type. Every verbs
// resource (device list, context, PD, MR, CQ, QP, AH, completion channel) is
// held by one of these, and the owning struct declares them in creation order
// so that C++ destroys them in exact reverse order, as rdma-core requires
// (a PD cannot go while a QP or MR still uses it).
//
// The deleter is a template parameter, not a verbs call baked in, so tests
// can instantiate the same resource layout with deleters that record the order.

#include <utility>

namespace hostmesh::agent::verbs {

// Called when a deleter fails in a destructor, where nothing can be returned:
// logs at warn. `what` names the resource kind (the deleter's kName).
void ReportReleaseFailure(const char* what, int errnum);

// Deleter requirements:
//   static constexpr const char* kName;
//   int operator()(T* handle) const;   // 0 or an errno value
template <typename T, typename Deleter>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(T* handle) : handle_(handle) {}
  ~UniqueHandle() {
    if (const int err = Release(); err != 0) ReportReleaseFailure(Deleter::kName, err);
  }

  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      if (const int err = Release(); err != 0) ReportReleaseFailure(Deleter::kName, err);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  T* get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

  // Releases now and returns the deleter's errno (0 on success or if empty),
  // for callers that want to see a failed release instead of a log line.
  int Release() {
    if (handle_ == nullptr) return 0;
    return Deleter{}(std::exchange(handle_, nullptr));
  }

 private:
  T* handle_ = nullptr;
};

}  // namespace hostmesh::agent::verbs
