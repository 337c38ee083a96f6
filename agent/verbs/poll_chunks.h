#pragma once

// Fills a caller's batch from a poll call with a smaller fixed buffer (a
// plain ibv_poll_cq into a stack array of ibv_wc). The caller treats "fewer
// than asked" as "the CQ is drained", so a chunked poll must keep polling
// while each chunk comes back full, and stop at the first short one.

#include <algorithm>
#include <cstddef>
#include <span>

#include "agent/verbs/completion_queue.h"

namespace hostmesh::agent::verbs {

// poll(std::span<Completion> chunk) -> CqPollResult, chunk.size() <= chunk_size.
template <typename PollChunk>
CqPollResult PollInChunks(std::span<Completion> out, std::size_t chunk_size, PollChunk&& poll) {
  CqPollResult total;
  while (total.count < out.size()) {
    const std::size_t want = std::min(chunk_size, out.size() - total.count);
    const CqPollResult got = poll(out.subspan(total.count, want));
    total.count += got.count;
    if (got.error != 0) {
      total.error = got.error;
      break;
    }
    if (got.count < want) break;  // drained
  }
  return total;
}

}  // namespace hostmesh::agent::verbs
