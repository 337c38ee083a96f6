// Uploads for the in-process analyzer app tests: one agent ("h1", boot 7)
// with kNics NICs, every probe to or from kBadNic timing out.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.grpc.pb.h"

namespace hostmesh::analyzer::app::testing {

using namespace std::chrono_literals;
constexpr std::uint32_t kNics = 4;
constexpr std::uint32_t kBadNic = 2;

// Every ordered NIC pair, `per_pair` probes each, stamped over the last 100 ms;
// those touching kBadNic time out.
inline v1::UploadBatch Batch(std::uint64_t seq, WallTime now, int per_pair) {
  v1::UploadBatch batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id("h1");
  batch.set_boot_id(7);
  batch.set_batch_seq(seq);
  batch.set_created_ns(now.time_since_epoch().count());
  std::uint64_t n = 0;
  for (std::uint32_t src = 0; src < kNics; ++src) {
    for (std::uint32_t dst = 0; dst < kNics; ++dst) {
      if (src == dst) continue;
      for (int i = 0; i < per_pair; ++i, ++n) {
        v1::ProbeResult* r = batch.add_results();
        r->set_src_nic(src);
        r->set_dst_nic(dst);
        r->set_src_port(49152 + static_cast<std::uint32_t>(i));
        r->set_dst_port(4791);
        r->set_sequence(seq * 1000 + n);
        const std::int64_t t =
            (now - 100ms).time_since_epoch().count() + static_cast<std::int64_t>(n) * 1'000'000;
        r->set_send_time_ns(t);
        r->set_app_send_ns(t);
        r->set_payload_bytes(50);
        if (src == kBadNic || dst == kBadNic) {
          r->set_timeout(true);
          continue;
        }
        r->set_nic_send_ns(t + 1000);
        r->set_nic_recv_ns(t + 6000);
        r->set_app_recv_ns(t + 9000);
      }
    }
  }
  return batch;
}

// The JSON object of nic `nic` in an /api/v1/rnics body ("" if absent).
inline std::string RnicObject(const std::string& body, std::uint32_t nic) {
  const auto at = body.find("\"nic\":" + std::to_string(nic) + ",");
  if (at == std::string::npos) return "";
  return body.substr(at, body.find('}', at) - at);
}

// One batch over a fresh stream, as an agent sends it; the ack's status.
inline v1::UploadAck::Status UploadOne(v1::AgentIngest::Stub& stub, const v1::UploadBatch& batch) {
  grpc::ClientContext context;
  auto stream = stub.Upload(&context);
  v1::UploadAck ack;
  if (!stream->Write(batch) || !stream->Read(&ack)) return v1::UploadAck::STATUS_UNSPECIFIED;
  stream->WritesDone();
  stream->Finish();
  return ack.status();
}

}  // namespace hostmesh::analyzer::app::testing
