#pragma once

#include <memory>

#include "hostmesh/v1/ingest.pb.h"

namespace hostmesh::agent::upload {

// A closed batch, immutable from then on and shared by the spool (until the
// analyzer acknowledges it) and the channel (until its write completes): a
// write or a resend never copies it. The batcher builds it in its own protobuf
// arena, which the pointer keeps alive.
using SharedBatch = std::shared_ptr<const v1::UploadBatch>;

}  // namespace hostmesh::agent::upload
