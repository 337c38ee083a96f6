// Uploads of one agent ("h1", boot 7) on host 0 of a generated fabric, as its
// tracer and prober would send them, with or without a gray link eating every
// probe (and trace) that crosses it: for the analyzer tests without an
// inventory, and with one that is wrong about the fabric.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hostmesh/v1/ingest.pb.h"
#include "tests/analyzer/store/test_batches.h"
#include "topology/ecmp.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::analyzer::testing {

using topology::Hop;
using topology::Ipv4;
using topology::LinkId;

struct TracedFabric {
  static constexpr topology::FabricShape kShape{.hosts = 1, .rails = 4, .spines = 4};
  static constexpr int kRails = 4;
  static constexpr int kPorts = 16;  // per NIC pair: every ECMP path four times
  static constexpr int kProbes = 4;  // per port and batch

  // h1's Hello, with the NICs' addresses.
  v1::AgentHello Hello() const {
    v1::AgentHello hello = MakeHello("h1", 7, kRails);
    for (int r = 0; r < kRails; ++r) hello.mutable_nics(r)->set_ip(Nic(r).ToString());
    return hello;
  }

  Ipv4 Nic(int rail) const {
    const topology::Device& host = truth.device(0);
    return truth.interface(host.interfaces[static_cast<std::size_t>(rail)]).ip;
  }
  LinkId Link(const std::string& inventory_name) const {
    for (LinkId id = 0; id < truth.links().size(); ++id) {
      if (truth.link(id).name == inventory_name) return id;
    }
    ADD_FAILURE() << "no link " << inventory_name;
    return topology::kNone;
  }
  // The addresses of a link of the truth, lower end first: how a learned fabric names it.
  std::string AddressName(LinkId id) const {
    return truth.interface(truth.link(id).lower).ip.ToString() + "-" +
           truth.interface(truth.link(id).upper).ip.ToString();
  }

  // Every NIC pair and port: the path report as a trace would see it with
  // `gray` eating every probe that crosses it (answers up to the link, then
  // silence), and kProbes results, timed out when their path crosses `gray`.
  v1::UploadBatch Batch(std::uint64_t seq, std::int64_t t, LinkId gray) const {
    v1::UploadBatch batch = MakeBatch("h1", 7, seq, 0, WallTime{std::chrono::nanoseconds{t}});
    std::uint64_t sequence = seq * 100'000;
    for (int a = 0; a < kRails; ++a) {
      for (int b = 0; b < kRails; ++b) {
        if (a == b) continue;
        const auto paths = topology::EnumerateEcmpPaths(truth, Nic(a), Nic(b));
        for (int p = 0; p < kPorts; ++p) {
          const auto& path = paths[static_cast<std::size_t>(p) % paths.size()];
          const auto cut = std::find(path.begin(), path.end(), gray);
          std::vector<Hop> hops = topology::ExpectedHops(truth, path, Nic(a));
          if (cut == path.end()) {
            hops.emplace_back(Nic(b));
          } else {
            hops.resize(static_cast<std::size_t>(cut - path.begin()));
            hops.insert(hops.end(), 3, std::nullopt);
          }
          v1::PathReport* report = batch.add_paths();
          report->set_src_ip(Nic(a).ToString());
          report->set_dst_ip(Nic(b).ToString());
          report->set_src_nic(static_cast<std::uint32_t>(a));
          report->set_dst_nic(static_cast<std::uint32_t>(b));
          report->set_src_port(static_cast<std::uint32_t>(49152 + p));
          report->set_dst_port(4791);
          report->set_time_ns(t);
          for (const Hop& hop : hops) {
            report->add_hops()->set_address(hop ? hop->ToString() : "");
          }
          for (int i = 0; i < kProbes; ++i) {
            v1::ProbeResult* r = batch.add_results();
            r->set_src_nic(static_cast<std::uint32_t>(a));
            r->set_dst_nic(static_cast<std::uint32_t>(b));
            r->set_src_port(static_cast<std::uint32_t>(49152 + p));
            r->set_dst_port(4791);
            r->set_sequence(++sequence);
            const std::int64_t at = t + static_cast<std::int64_t>(sequence % 1000) * 1'000'000;
            r->set_send_time_ns(at);
            r->set_app_send_ns(at);
            if (cut != path.end()) {
              r->set_timeout(true);
              continue;
            }
            r->set_nic_send_ns(at + 1000);
            r->set_nic_recv_ns(at + 6000);
            r->set_app_recv_ns(at + 9000);
          }
        }
      }
    }
    return batch;
  }

  topology::Topology truth = topology::BuildTopology(topology::GenerateInventory(kShape));
};

}  // namespace hostmesh::analyzer::testing
