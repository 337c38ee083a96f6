// Every path the testbed's kernel chose (tests/sim/ecmp/fixtures, recorded by
// sim/ecmp/record_fixtures.py with `fabric truth-path`) reproduced by
// FabricRouter over the generated inventory of the same shape and seed.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/ecmp/fabric_router.h"
#include "topology/generator.h"
#include "topology/inventory_loader.h"

namespace hostmesh::sim::ecmp {
namespace {

struct FixtureFlow {
  int line = 0;
  std::string src;
  std::string dst;
  std::uint16_t sport = 0;
  std::vector<std::string> links;
};

struct Fixture {
  std::string name;
  topology::FabricShape shape;
  std::uint32_t seed = 0;
  std::uint16_t dport = 0;
  std::vector<std::string> dead;
  std::vector<FixtureFlow> flows;
};

int IntField(const std::string& word, const std::string& key) {
  if (word.rfind(key + "=", 0) != 0) throw std::runtime_error("expected " + key + "=, got " + word);
  return std::stoi(word.substr(key.size() + 1));
}

Fixture Load(const std::filesystem::path& path) {
  Fixture fixture;
  fixture.name = path.filename().string();
  std::ifstream in(path);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    std::istringstream words(text);
    std::string first;
    words >> first;
    if (first == "shape") {
      std::string h, r, s, p, t;
      words >> h >> r >> s >> p >> t;
      fixture.shape = {IntField(h, "hosts"), IntField(r, "rails"), IntField(s, "spines"),
                       IntField(p, "pods"), IntField(t, "tiers")};
    } else if (first == "seed") {
      unsigned long seed = 0;
      words >> seed;
      fixture.seed = static_cast<std::uint32_t>(seed);
    } else if (first == "dport") {
      int dport = 0;
      words >> dport;
      fixture.dport = static_cast<std::uint16_t>(dport);
    } else if (first == "dead") {
      std::string link;
      words >> link;
      fixture.dead.push_back(link);
    } else {
      FixtureFlow flow;
      flow.line = line;
      flow.src = first;
      int sport = 0;
      words >> flow.dst >> sport;
      flow.sport = static_cast<std::uint16_t>(sport);
      for (std::string link; words >> link;) flow.links.push_back(link);
      fixture.flows.push_back(std::move(flow));
    }
  }
  return fixture;
}

std::vector<Fixture> LoadAll() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(HOSTMESH_ECMP_FIXTURES)) {
    if (entry.path().extension() == ".txt") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Fixture> fixtures;
  for (const auto& path : paths) fixtures.push_back(Load(path));
  return fixtures;
}

TEST(FabricRouterFixtures, ReproduceEveryKernelPath) {
  const std::vector<Fixture> fixtures = LoadAll();
  // Seed 1 and another seed, two pods, a downed link: the recorder's cases.
  ASSERT_GE(fixtures.size(), 4U);
  std::size_t checked = 0;
  for (const Fixture& fixture : fixtures) {
    SCOPED_TRACE(fixture.name);
    ASSERT_GE(fixture.flows.size(), 100U);
    const topology::Topology topo =
        topology::BuildTopology(topology::GenerateInventory(fixture.shape));
    std::unordered_map<std::string, LinkId> by_name;
    for (LinkId l = 0; l < topo.links().size(); ++l) by_name[topo.link(l).name] = l;
    std::vector<LinkId> dead_ids;
    for (const std::string& name : fixture.dead) dead_ids.push_back(by_name.at(name));
    const FabricRouter router(topo, fixture.seed);
    const DeadLinks dead = router.Reconverge(dead_ids);
    for (const FixtureFlow& flow : fixture.flows) {
      PathLinks path{};
      const std::size_t n =
          router.Route(*topology::ParseIpv4(flow.src), *topology::ParseIpv4(flow.dst), flow.sport,
                       fixture.dport, fixture.dead.empty() ? nullptr : &dead, path);
      std::vector<std::string> got;
      for (std::size_t i = 0; i < n; ++i) got.push_back(topo.link(path[i]).name);
      EXPECT_EQ(got, flow.links) << "line " << flow.line << ": " << flow.src << " -> " << flow.dst
                                 << " sport " << flow.sport;
      ++checked;
    }
  }
  EXPECT_GE(checked, 1000U);
}

}  // namespace
}  // namespace hostmesh::sim::ecmp
