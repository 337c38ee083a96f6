#pragma once

// What one agent of the fleet uploads, with values shaped like the real
// agent's (so a store's compression sees realistic entropy): 8 NICs probing
// 10 times a second each at a random other NIC from a pool of 16 source ports,
// a quarter of the pool replaced every minute and each new 5-tuple traced
// (a path report of 4 hops); kernel timestamps with microsecond jitter; 0.1%
// timeouts; one batch a second. Seeded: the same agent index and seed give the
// same batches.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/net/roce.h"
#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::bench {

struct FleetAgentShape {
  std::uint32_t nics = 8;
  double probes_per_second = 10;  // per NIC
  std::uint32_t pool = 16;
  std::uint32_t rotate_per_minute = 4;
  double timeout_ratio = 0.001;
};

class FleetAgent {
 public:
  FleetAgent(std::uint32_t index, std::int64_t start_ns, FleetAgentShape shape = {},
             std::uint64_t seed = 1)
      : shape_(shape),
        rng_(seed * 1'000'003 + index),
        agent_id_("host-" + std::to_string(100000 + index).substr(1)),
        index_(index),
        due_(shape.nics),
        sequence_(shape.nics, 0),
        ports_(shape.nics) {
    std::uniform_int_distribution<std::int64_t> phase(0, Interval());
    for (std::uint32_t n = 0; n < shape_.nics; ++n) {
      due_[n] = start_ns + phase(rng_);
      for (std::uint32_t i = 0; i < shape_.pool; ++i) ports_[n].push_back(NextPort());
    }
    next_rotation_ = start_ns + 60'000'000'000;
    for (std::uint32_t n = 0; n < shape_.nics; ++n) {
      for (std::uint16_t port : ports_[n]) pending_traces_.push_back({n, port});
    }
  }

  const std::string& agent_id() const { return agent_id_; }
  std::uint64_t boot_id() const { return 1; }

  v1::AgentHello Hello() const {
    v1::AgentHello hello;
    hello.set_schema_version(v1::SCHEMA_VERSION_1);
    hello.set_agent_id(agent_id_);
    hello.set_boot_id(boot_id());
    hello.set_host(agent_id_);
    for (std::uint32_t n = 0; n < shape_.nics; ++n) {
      v1::Nic* nic = hello.add_nics();
      nic->set_id(n);
      nic->set_name("mlx5_" + std::to_string(n));
      nic->set_rail(n);
      nic->set_ip(NicIp(n));
    }
    return hello;
  }

  // The batch of the probes sent in [from_ns, to_ns) and the traces done then.
  v1::UploadBatch Batch(std::int64_t from_ns, std::int64_t to_ns) {
    v1::UploadBatch batch;
    batch.set_schema_version(v1::SCHEMA_VERSION_1);
    batch.set_agent_id(agent_id_);
    batch.set_boot_id(boot_id());
    batch.set_batch_seq(++batch_seq_);
    batch.set_created_ns(to_ns);
    while (next_rotation_ < to_ns) Rotate();
    std::uniform_int_distribution<std::int64_t> jitter(-Interval() / 20, Interval() / 20);
    std::uniform_int_distribution<std::uint32_t> other(1, shape_.nics - 1);
    std::uniform_int_distribution<std::uint32_t> slot(0, shape_.pool - 1);
    std::uniform_int_distribution<std::int64_t> post(1'000, 20'000), stamp(3'000, 15'000),
        proc(10'000, 60'000);
    std::lognormal_distribution<double> wire(9.2, 0.25);  // ~10 us, a tail to 30
    std::uniform_real_distribution<double> u(0, 1);
    for (;;) {
      std::uint32_t n = 0;
      for (std::uint32_t k = 1; k < shape_.nics; ++k) {
        if (due_[k] < due_[n]) n = k;
      }
      const std::int64_t t = due_[n];
      if (t < from_ns) {
        due_[n] += Interval() + jitter(rng_);
        continue;
      }
      if (t >= to_ns) break;
      due_[n] += Interval() + jitter(rng_);
      v1::ProbeResult* r = batch.add_results();
      r->set_src_nic(n);
      r->set_dst_nic((n + other(rng_)) % shape_.nics);
      r->set_src_port(ports_[n][slot(rng_)]);
      r->set_dst_port(net::kRoceV2Port);
      r->set_sequence(++sequence_[n]);
      r->set_send_time_ns(t);
      const std::int64_t t1 = t + post(rng_);
      const std::int64_t t2 = t1 + stamp(rng_);
      r->set_app_send_ns(t1);
      r->set_nic_send_ns(t2);
      r->set_send_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
      r->set_payload_bytes(50);
      if (u(rng_) < shape_.timeout_ratio) {
        r->set_timeout(true);
        continue;
      }
      const std::int64_t t3 = t2 + static_cast<std::int64_t>(wire(rng_));
      r->set_nic_recv_ns(t3);
      r->set_app_recv_ns(t3 + proc(rng_));
      r->set_recv_timestamp_source(v1::TIMESTAMP_SOURCE_KERNEL);
    }
    // New 5-tuples are traced within seconds of entering the pool.
    const std::size_t traces = std::min<std::size_t>(pending_traces_.size(), 8);
    for (std::size_t i = 0; i < traces; ++i) {
      const auto [n, port] = pending_traces_.back();
      pending_traces_.pop_back();
      for (std::uint32_t d = 0; d < shape_.nics; ++d) {
        if (d != n) AddPath(batch, n, d, port, to_ns);
      }
    }
    return batch;
  }

 private:
  std::int64_t Interval() const {
    return static_cast<std::int64_t>(1e9 / shape_.probes_per_second);
  }
  std::uint16_t NextPort() {
    return static_cast<std::uint16_t>(49152 + (port_walk_++ * 4099) % 16384);
  }
  std::string NicIp(std::uint32_t n) const {
    const std::uint32_t a = index_ * shape_.nics + n;
    return "10." + std::to_string(n) + "." + std::to_string(a / 256 % 256) + "." +
           std::to_string(a % 256);
  }
  void Rotate() {
    for (std::uint32_t n = 0; n < shape_.nics; ++n) {
      for (std::uint32_t k = 0; k < shape_.rotate_per_minute; ++k) {
        auto& pool = ports_[n];
        pool.erase(pool.begin());
        pool.push_back(NextPort());
        pending_traces_.push_back({n, pool.back()});
      }
    }
    next_rotation_ += 60'000'000'000;
  }
  void AddPath(v1::UploadBatch& batch, std::uint32_t src, std::uint32_t dst, std::uint16_t port,
               std::int64_t now_ns) {
    v1::PathReport* p = batch.add_paths();
    p->set_src_ip(NicIp(src));
    p->set_dst_ip(NicIp(dst));
    p->set_src_port(port);
    p->set_dst_port(net::kRoceV2Port);
    p->set_protocol(17);
    const std::uint32_t spine = (port * 2654435761u + dst) % 64;
    const std::string hops[] = {"10.200." + std::to_string(src) + ".1",
                                "10.201." + std::to_string(spine) + "." + std::to_string(src),
                                "10.200." + std::to_string(dst) + "." + std::to_string(spine),
                                NicIp(dst)};
    std::uniform_int_distribution<std::int64_t> rtt(20'000, 90'000);
    for (std::uint32_t ttl = 1; ttl <= 4; ++ttl) {
      v1::Hop* hop = p->add_hops();
      hop->set_ttl(ttl);
      hop->set_address(hops[ttl - 1]);
      hop->set_rtt_ns(rtt(rng_));
    }
    p->set_reached_destination(true);
    p->set_time_ns(now_ns);
    p->set_src_nic(src);
    p->set_dst_nic(dst);
  }

  FleetAgentShape shape_;
  std::mt19937_64 rng_;
  std::string agent_id_;
  std::uint32_t index_;
  std::vector<std::int64_t> due_;
  std::vector<std::uint64_t> sequence_;
  std::vector<std::vector<std::uint16_t>> ports_;
  std::vector<std::pair<std::uint32_t, std::uint16_t>> pending_traces_;
  std::uint32_t port_walk_ = 0;
  std::int64_t next_rotation_ = 0;
  std::uint64_t batch_seq_ = 0;
};

}  // namespace hostmesh::bench
