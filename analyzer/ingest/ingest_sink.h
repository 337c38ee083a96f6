// Where ingested batches go besides the store: the in-memory analysis.
#pragma once

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::analyzer::ingest {

class IngestSink {
 public:
  virtual ~IngestSink() = default;
  // Once per batch, after it is durable and before its ack; never for a
  // duplicate or a rejected batch. Called from the one committer thread, in
  // commit order, so an implementation needs no locking against itself; it
  // must be quick (the next group commit waits for it). `hello` is what the
  // batch's (agent, boot) said, which ingest checked the batch against.
  virtual void OnBatch(const v1::UploadBatch& batch, const v1::AgentHello& hello) = 0;
};

}  // namespace hostmesh::analyzer::ingest
