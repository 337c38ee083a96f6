// Who holds the HTTP server's connections: the global and per-peer caps and
// each connection's deadline. Pure (no sockets; time is passed in), driven by
// the server under its lock, so the policy is tested in virtual time.
//
// Hand-written rather than libmicrohttpd's MHD_OPTION_CONNECTION_LIMIT and
// MHD_OPTION_PER_IP_CONNECTION_LIMIT: at its global limit MHD 0.9.75 stops
// accepting (connections wait unseen in the kernel's backlog), and it refuses
// a peer over its per-IP limit with the same log line as the global limit and
// without naming the peer. Neither can be counted or warned of per cause.
// MHD's own limit stays on as a backstop above these caps (server.cc).
//
// Deadlines, likewise: MHD_OPTION_CONNECTION_TIMEOUT is an inactivity
// timeout, which a client sending one header byte every few seconds resets
// forever. Here a request must arrive whole within `timeout` of the
// connection opening (or of the previous response, on a kept-alive
// connection), and a response must be taken within `timeout` of being queued.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/base/clock.h"

namespace hostmesh::http {

struct ConnectionLimits {
  std::size_t max_connections = 256;
  std::size_t max_connections_per_peer = 16;
  std::chrono::nanoseconds timeout = std::chrono::seconds{10};
};

enum class Admission { kAdmitted, kRefusedMaxConnections, kRefusedPerPeer };

// What a connection was waiting for when its deadline passed.
enum class ConnectionPhase {
  kRequest,   // the request line and headers (a slow or silent client)
  kHandling,  // the handler (no deadline: the server's own time)
  kResponse,  // the client to take the response (a slow reader)
  kIdle,      // a next request on a kept-alive connection (normal for scrapers)
};
std::string_view PhaseName(ConnectionPhase phase);

class ConnectionBook {
 public:
  using Id = std::uintptr_t;

  explicit ConnectionBook(ConnectionLimits limits) : limits_(limits) {}

  // A connection from `peer` (an address, as text) asks in. An admitted one
  // counts against the caps at once, before it opens, so two admissions
  // racing in two workers cannot both take the last place.
  Admission Admit(const std::string& peer);
  // Gives back the place of an admitted connection that never opened (the
  // library failed to set it up after admitting it).
  void Cancel(const std::string& peer);
  // An admitted connection is open: its request must arrive by now + timeout.
  void Opened(Id id, const std::string& peer, MonoTime now);
  // A request line arrived (on a kept-alive connection: a next request);
  // the deadline stays: the headers must follow within it.
  void RequestLineArrived(Id id);
  // Its request line and headers arrived: no deadline while the handler runs.
  void RequestReceived(Id id);
  // Its response is queued: the client must take it by now + timeout.
  void ResponseQueued(Id id, MonoTime now);
  // The response went out; the next request must arrive by now + timeout.
  void RequestDone(Id id, MonoTime now);
  // Gone (for whatever reason): its places are free again.
  void Closed(Id id);

  // Connections whose deadline has passed, with what they were waiting for.
  // Each is reported once, however long it then takes to close.
  std::vector<std::pair<Id, ConnectionPhase>> TakeOverdue(MonoTime now);

  std::size_t open() const { return connections_.size(); }
  std::size_t admitted() const { return admitted_; }
  std::size_t admitted_from(const std::string& peer) const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Connection {
    std::string peer;
    ConnectionPhase phase = ConnectionPhase::kRequest;
    std::optional<MonoTime> deadline;
  };
  void Release(const std::string& peer);
  Connection* Find(Id id);

  ConnectionLimits limits_;
  std::size_t admitted_ = 0;  // opened plus admitted-not-yet-opened
  std::unordered_map<std::string, std::size_t> per_peer_;
  std::unordered_map<Id, Connection> connections_;
};

}  // namespace hostmesh::http
