#include "analyzer/ingest/grpc_listener_watch.h"

#include <grpc/support/log.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "common/base/logging.h"

namespace hostmesh::analyzer::ingest {

namespace {

std::atomic<std::uint64_t> g_listener_failures{0};

void RouteGrpcLog(gpr_log_func_args* args) {
  const std::string_view message = args->message != nullptr ? args->message : "";
  if (SaysListenerFailed(message)) g_listener_failures.fetch_add(1, std::memory_order_relaxed);
  // Never destroyed: gRPC's threads may still log while the process exits.
  static const auto* const logger = new std::shared_ptr<spdlog::logger>(GetLogger("grpc"));
  spdlog::logger& log = **logger;
  switch (args->severity) {
    case GPR_LOG_SEVERITY_DEBUG:
      log.debug("{} ({}:{})", message, args->file, args->line);
      break;
    case GPR_LOG_SEVERITY_INFO:
      log.info("{} ({}:{})", message, args->file, args->line);
      break;
    case GPR_LOG_SEVERITY_ERROR:
      log.error("{} ({}:{})", message, args->file, args->line);
      break;
  }
}

}  // namespace

void WatchGrpcLog() {
  static std::once_flag once;
  std::call_once(once, [] { gpr_set_log_function(RouteGrpcLog); });
}

std::uint64_t GrpcListenerFailures() {
  return g_listener_failures.load(std::memory_order_relaxed);
}

bool SaysListenerFailed(std::string_view message) {
  // tcp_server_posix.cc's "Failed accept4: <strerror>" (1.51), also
  // "Closing acceptor. Failed accept4: ..." in later releases' listener.
  return message.find("Failed accept4") != std::string_view::npos;
}

}  // namespace hostmesh::analyzer::ingest
