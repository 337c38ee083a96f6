#pragma once

// The agents' side of bench/ingest_bench: many Upload streams, multiplexed
// over a few connections (HTTP/2 carries many streams on one), driven by
// gRPC's asynchronous API from a few threads, so 10,000 agents need neither
// 10,000 threads nor 20,000 file descriptors. Batches are sent pre-encoded
// (a per-stream header plus a shared body of fleet_agent.h results), so the
// load generator spends its time on the wire, not on protobuf.
//
// Each stream says Hello, then sends `batches` batches: paced at `rate`
// batches/s (the fleet's shape: one a second), or, with rate 0, as fast as
// the acks allow with at most `in_flight` unacknowledged.

#include <cstdint>
#include <string>
#include <vector>

namespace hostmesh::bench {

struct LoadOptions {
  std::string address;
  int streams = 4;
  int batches = 300;
  int results = 1000;  // per batch, about
  // Results packed (UploadBatch.packed_results), as current agents send
  // them; false: one message each, as agents before them did.
  bool packed_results = false;
  int channels = 4;   // TCP connections the streams share
  int threads = 1;    // completion-queue threads
  double rate = 0;    // batches/s per stream, 0: closed loop
  int in_flight = 8;  // closed loop: unacknowledged batches per stream
  // Mutual TLS when set: a directory made by bench/make_bench_pki.sh (ca.crt,
  // client.key, bench-<i>.crt per honest stream, hostile-<i>.crt per hostile
  // one). Each stream then has a connection of its own, as agents do.
  std::string tls_dir;
  // Hostile streams beside the honest ones (TLS only: they hold certificates
  // of the fleet's CA, as a compromised host does), in turn: bytes that are no
  // batch, batches over the size limit, and batches carrying an honest
  // agent's id. Each reopens its stream 50 ms after the analyzer ends it,
  // until the honest streams are done.
  int hostile = 0;
  // The size of the hostile oversize batches: just over the analyzer's 8 MiB
  // batch limit by default (read and refused from their header); past gRPC's
  // own receive limit (17 MiB) gRPC reads them whole and refuses them itself.
  std::size_t hostile_oversize_bytes = std::size_t{8} << 20;
  // With no honest streams (streams 0): the hostile ones run until a byte or
  // EOF can be read from this descriptor (ingest_bench runs them in a process
  // of their own, as attackers are other machines).
  int stop_fd = -1;
};

// How the analyzer ended the hostile streams' calls, by gRPC status.
struct HostileReport {
  std::uint64_t calls = 0;
  std::uint64_t invalid_argument = 0;
  std::uint64_t permission_denied = 0;
  std::uint64_t resource_exhausted = 0;
  std::uint64_t other_status = 0;
  std::uint64_t acks = 0;  // acks they got (REJECTED ones, for oversize batches)
};

struct LoadReport {
  std::uint64_t accepted = 0;        // ACCEPTED acks
  std::uint64_t other = 0;           // any other ack
  std::uint64_t broken_streams = 0;  // ended with an error status or early
  std::uint64_t results_sent = 0;    // in accepted batches
  double seconds = 0;                // first write to last ack
  double latency_mean_ms = 0;        // write to ack
  double latency_p50_ms = 0;
  double latency_p99_ms = 0;
  double latency_max_ms = 0;
  double cpu_seconds = 0;  // of the load generator, over `seconds`
  std::uint64_t wire_bytes = 0;
  double hello_seconds = 0;  // every stream's connection (TLS handshake) and Hello
  HostileReport hostile;
  char error[200] = {};
};

// Runs the load; `started` is called once every stream said Hello, just
// before the first batch.
LoadReport RunLoad(const LoadOptions& options, void (*started)(void*), void* arg);

}  // namespace hostmesh::bench
