#pragma once

// Test-only fault hooks on the agent's metrics server (metrics.debug_hooks,
// off by default): faults no outside tool can cause on a real device, such as
// a QP in the error state, which the soft-RoCE test needs to see the agent
// recover from. The HTTP thread only validates and queues a request; the
// probe loop takes it (Take) and acts on its transport, which is not
// thread-safe.
//
//   POST /debug/qp-error?nic=NAME[&qp=N]   N: 0 the receive QP (default), 1.. send QPs
//   POST /debug/device-error?nic=NAME      as if the device raised DEVICE_FATAL: the
//                                          NIC is closed and reopened for real

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "agent/core/probe_types.h"
#include "common/http/handler.h"

namespace hostmesh::http {
class Router;
}

namespace hostmesh::agent::app {

struct QpErrorRequest {
  enum class Kind : std::uint8_t { kQpError, kDeviceError };
  NicId nic = 0;
  std::uint32_t qp = 0;
  Kind kind = Kind::kQpError;
  friend bool operator==(const QpErrorRequest&, const QpErrorRequest&) = default;
};

class DebugHooks {
 public:
  explicit DebugHooks(std::vector<std::string> nic_names) : nics_(std::move(nic_names)) {}

  void Mount(http::Router& router);
  // The requests queued since the last call, oldest first.
  std::vector<QpErrorRequest> Take();

  // The handler of POST /debug/qp-error (public for tests).
  http::Response OnQpError(const http::Request& request);
  http::Response OnDeviceError(const http::Request& request);

 private:
  static constexpr std::size_t kMaxQueued = 64;
  const std::vector<std::string> nics_;
  std::mutex mu_;
  http::Response Queue(QpErrorRequest request, std::string what);
  std::vector<QpErrorRequest> queued_;
};

}  // namespace hostmesh::agent::app
