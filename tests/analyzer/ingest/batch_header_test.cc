// ReadBatchHeader: the header fields of an UploadBatch without its items, as
// a full parse would give them, and an overlong agent id kept too long.
#include "analyzer/ingest/batch_header.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/analyzer/store/test_batches.h"

namespace hostmesh::analyzer::ingest {
namespace {

bool Read(const std::string& bytes, v1::UploadBatch& header) {
  google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  return ReadBatchHeader(in, header);
}

TEST(batch_header, TheHeaderIsWhatAFullParseGivesAndNoItemIsParsed) {
  v1::UploadBatch batch =
      analyzer::testing::MakeBatch("h1", 7, 42, 500, WallTime{std::chrono::seconds{1'700'000'000}});
  batch.add_paths()->set_src_ip("198.18.0.1");
  const std::string bytes = batch.SerializeAsString();
  v1::UploadBatch header;
  ASSERT_TRUE(Read(bytes, header));
  EXPECT_EQ(header.schema_version(), batch.schema_version());
  EXPECT_EQ(header.agent_id(), "h1");
  EXPECT_EQ(header.boot_id(), 7u);
  EXPECT_EQ(header.batch_seq(), 42u);
  EXPECT_EQ(header.results_size(), 0);
  EXPECT_EQ(header.paths_size(), 0);
  // Fields in another order (protobuf allows any) read the same.
  v1::UploadBatch items;
  *items.mutable_results() = batch.results();
  v1::UploadBatch head;
  head.set_batch_seq(42);
  head.set_agent_id("h1");
  v1::UploadBatch reordered;
  ASSERT_TRUE(Read(items.SerializeAsString() + head.SerializeAsString(), reordered));
  EXPECT_EQ(reordered.batch_seq(), 42u);
  EXPECT_EQ(reordered.agent_id(), "h1");
}

TEST(batch_header, AnOverlongAgentIdStaysTooLongNeverAnotherAgents) {
  v1::UploadBatch batch;
  batch.set_agent_id(std::string(300, 'h'));
  batch.set_batch_seq(3);
  v1::UploadBatch header;
  ASSERT_TRUE(Read(batch.SerializeAsString(), header));
  EXPECT_EQ(header.agent_id(), std::string(257, 'h'));
  EXPECT_EQ(header.batch_seq(), 3u);
}

TEST(batch_header, BytesThatAreNoProtobufAreRefused) {
  v1::UploadBatch header;
  EXPECT_FALSE(Read(std::string("\x07 garbage", 9), header));
  // A field whose length runs past the end.
  EXPECT_FALSE(Read(std::string("\x32\xff\x01"
                                "abc",
                                6),
                    header));
}

}  // namespace
}  // namespace hostmesh::analyzer::ingest
