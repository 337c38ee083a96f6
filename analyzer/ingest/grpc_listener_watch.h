// gRPC 1.51 (Debian 12) stops accepting on a listening port for good when
// accept4 fails with an error other than EAGAIN, EINTR or ECONNABORTED. With
// the open-files limit reached (EMFILE: a reconnect storm, or anyone who can
// open TCP connections to the port), it logs "Failed accept4" and drops the
// port, while the kernel goes on completing connections into its backlog:
// agents connect and are never answered, and the analyzer keeps running
// (grpc/grpc#20418; gRPC 1.57 retries instead). That log line is the only
// sign, so gRPC's log is routed through here, into the analyzer's log, and
// counted when it says a listener failed (listener_recovery.h acts on it).
#pragma once

#include <cstdint>
#include <string_view>

namespace hostmesh::analyzer::ingest {

// Routes gRPC's log to the "grpc" logger and counts listener failures. Call
// before gRPC starts; calling it again changes nothing.
void WatchGrpcLog();

// The listener failures gRPC has logged since WatchGrpcLog.
std::uint64_t GrpcListenerFailures();

// Whether a line of gRPC's log says that a listener stopped accepting.
bool SaysListenerFailed(std::string_view message);

}  // namespace hostmesh::analyzer::ingest
