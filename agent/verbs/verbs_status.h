#pragma once

// Errors of the verbs layer as values: libibverbs reports failures through
// errno (creation calls) or a returned errno value (everything else), and the
// data path must not throw, so each call site turns them into a VerbsError
// that names the call and carries strerror's text.

#include <string>
#include <utility>
#include <variant>

namespace hostmesh::agent::verbs {

struct VerbsError {
  int errnum = 0;       // errno value (0 when the failure is not an errno)
  std::string message;  // "ibv_create_qp(mlx5_0): Cannot allocate memory"
};

// `what` followed by the errno text, e.g. ErrnoError("ibv_alloc_pd", ENOMEM).
VerbsError ErrnoError(const std::string& what, int errnum);

// A value or the error that prevented it (std::expected is C++23).
template <typename T>
class VerbsResult {
 public:
  VerbsResult(T value) : state_(std::move(value)) {}           // NOLINT: implicit on purpose
  VerbsResult(VerbsError error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& value() const& { return std::get<T>(state_); }
  const VerbsError& error() const { return std::get<VerbsError>(state_); }

 private:
  std::variant<T, VerbsError> state_;
};

// For calls with nothing to return: an empty optional-like status.
struct VerbsOk {};
using VerbsStatus = VerbsResult<VerbsOk>;

}  // namespace hostmesh::agent::verbs
