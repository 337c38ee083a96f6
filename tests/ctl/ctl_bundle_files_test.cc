// A support bundle's files from fixture JSON (pure): every probe a CSV row
// with its 5-tuple and group, paths hop by hop, counters one per row, fields
// quoted where they must be, a README naming every file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "ctl/bundle_files.h"

namespace hostmesh::ctl {
namespace {

using ::testing::HasSubstr;

const char* kEvidence =
    R"({"version":1,"kind":"link_loss","summary":"link a, b","capture":{"probes_kept":3,)"
    R"("probes_thinned":9,"thinned_every":4},)"
    R"("groups":[{"role":"suspect"},{"role":"sibling"}],)"
    R"("tuples":[{"group":0,"agent_id":"h1","src_nic":0,"dst_nic":1,"src_port":50000,)"
    R"("dst_port":4791,"path":[{"link":3,"name":"h1-nic0"},null,{"link":9,"name":"x,y"}]},)"
    R"({"group":1,"agent_id":"h2","src_nic":2,"dst_nic":3,"src_port":50001,"dst_port":4791,"path":[]}],)"
    R"("probes":{"columns":["tuple","send_time_ns","timeout","network_ns","processing_ns"],)"
    R"("rows":[[0,100,false,5000,20000],[0,200,true,0,0],[1,150,false,6000,21000],[7,1,false,0,0]]},)"
    R"("verdicts":[{"start_ns":1,"end_ns":2,"loss":0.5,"rivals":[{"name":"l2","loss":0.01}]}],)"
    R"("counters":[{"agent_id":"h1","nic":0,"start_ns":1,"end_ns":2,"port_state":4,)"
    R"("deltas":{"rx_fcs_errors":7,"symbol_error":0}}]})";

std::map<std::string, std::string> Files(const BundleInputs& in) {
  std::string error;
  const auto files = MakeBundle(12, in, &error);
  EXPECT_TRUE(files.has_value()) << error;
  std::map<std::string, std::string> out;
  if (files) {
    for (const BundleFile& f : *files) out[f.name] = f.contents;
  }
  return out;
}

std::size_t Lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(BundleFiles, EveryProbeIsARowWithItsTupleAndGroup) {
  BundleInputs in;
  in.evidence = kEvidence;
  in.incident = R"({"id":12})";
  in.config = R"({"version":"t"})";
  in.analyzer = "127.0.0.1:8080";
  const auto files = Files(in);
  ASSERT_EQ(files.size(), 9u);
  const std::string& probes = files.at("probes.csv");
  EXPECT_EQ(Lines(probes), 4u) << "a header and 3 probes (one of an unknown 5-tuple left out)";
  EXPECT_THAT(probes, HasSubstr("tuple,group,role,agent_id,src_nic,dst_nic,src_port,dst_port,"
                                "send_time_ns,timeout,network_ns,processing_ns\n"));
  EXPECT_THAT(probes, HasSubstr("0,0,suspect,h1,0,1,50000,4791,200,1,0,0\n"));
  EXPECT_THAT(probes, HasSubstr("1,1,sibling,h2,2,3,50001,4791,150,0,6000,21000\n"));
  const std::string& paths = files.at("paths.csv");
  EXPECT_EQ(Lines(paths), 4u);
  EXPECT_THAT(paths, HasSubstr("0,0,h1,0,1,50000,1,,unknown\n"));
  EXPECT_THAT(paths, HasSubstr("0,0,h1,0,1,50000,2,9,\"x,y\"\n")) << "quoted: it holds a comma";
  EXPECT_THAT(files.at("counters.csv"), HasSubstr("h1,0,1,2,4,,rx_fcs_errors,7\n"));
  EXPECT_THAT(files.at("verdicts.csv"), HasSubstr("l2 0.01"));
  EXPECT_EQ(files.at("analyzer.json"), in.config);
  EXPECT_EQ(files.at("evidence.json"), in.evidence);
  const std::string& readme = files.at("README.txt");
  for (const auto& [name, contents] : files) {
    if (name != "README.txt") {
      EXPECT_THAT(readme, HasSubstr(name));
    }
  }
  EXPECT_THAT(readme, HasSubstr("incident 12"));
  EXPECT_THAT(readme, HasSubstr("thinned 1 in 4"));
  EXPECT_THAT(readme, HasSubstr("No flight-recorder extract"));
}

TEST(BundleFiles, WhatTheAnalyzerDidNotServeIsLeftOutAndSaid) {
  BundleInputs in;
  in.evidence = kEvidence;
  const auto files = Files(in);
  EXPECT_EQ(files.count("incident.json"), 0u);
  EXPECT_EQ(files.count("analyzer.json"), 0u);
  EXPECT_THAT(files.at("README.txt"), HasSubstr("did not serve its config"));
}

TEST(BundleFiles, NotEvidenceIsRefused) {
  BundleInputs in;
  in.evidence = R"({"open":[]})";
  std::string error;
  EXPECT_FALSE(MakeBundle(1, in, &error).has_value());
  EXPECT_THAT(error, HasSubstr("not an incident's evidence"));
  in.evidence = "{";
  EXPECT_FALSE(MakeBundle(1, in, &error).has_value());
}

TEST(BundleFiles, CsvFieldsAreQuotedOnlyWhenTheyMustBe) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

}  // namespace
}  // namespace hostmesh::ctl
