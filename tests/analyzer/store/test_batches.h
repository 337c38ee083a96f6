#pragma once

// Hellos and batches for store and ingest tests.
#include <chrono>
#include <cstdint>
#include <string>

#include "common/base/clock.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::testing {

inline v1::AgentHello MakeHello(const std::string& agent, std::uint64_t boot,
                                std::uint32_t nics = 4) {
  v1::AgentHello hello;
  hello.set_schema_version(v1::SCHEMA_VERSION_1);
  hello.set_agent_id(agent);
  hello.set_boot_id(boot);
  hello.set_host(agent);
  for (std::uint32_t i = 0; i < nics; ++i) {
    v1::Nic* nic = hello.add_nics();
    nic->set_id(i);
    nic->set_name("nic" + std::to_string(i));
    nic->set_rail(i);
    nic->set_ip("10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1));
  }
  return hello;
}

// `count` results spread over 4 NICs, sequence = batch_seq * count + i / 4,
// send times `start` + i ms.
inline v1::UploadBatch MakeBatch(const std::string& agent, std::uint64_t boot, std::uint64_t seq,
                                 int count, WallTime start) {
  v1::UploadBatch batch;
  batch.set_schema_version(v1::SCHEMA_VERSION_1);
  batch.set_agent_id(agent);
  batch.set_boot_id(boot);
  batch.set_batch_seq(seq);
  batch.set_created_ns(start.time_since_epoch().count());
  for (int i = 0; i < count; ++i) {
    v1::ProbeResult* r = batch.add_results();
    r->set_src_nic(static_cast<std::uint32_t>(i % 4));
    r->set_dst_nic(static_cast<std::uint32_t>((i + 1) % 4));
    r->set_src_port(49152 + static_cast<std::uint32_t>(i % 64));
    r->set_dst_port(4791);
    r->set_sequence(seq * static_cast<std::uint64_t>(count) + static_cast<std::uint64_t>(i / 4));
    const std::int64_t t = (start + std::chrono::milliseconds{i}).time_since_epoch().count();
    r->set_send_time_ns(t);
    r->set_app_send_ns(t);
    r->set_nic_send_ns(t + 1000);
    r->set_nic_recv_ns(t + 6000);
    r->set_app_recv_ns(t + 9000);
    r->set_payload_bytes(50);
  }
  return batch;
}

}  // namespace hostmesh::analyzer::testing
