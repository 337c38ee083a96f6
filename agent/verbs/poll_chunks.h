#pragma once

// Fills a caller's batch from a poll call with a smaller fixed buffer (a
// plain ibv_poll_cq into a stack array of ibv_wc). The caller treats "fewer
// than asked" as "the CQ is drained", so a chunked poll must keep polling
// while each chunk comes back full, and stop at the first short one.

#include <algorithm>
#include <cerrno>
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

// The extended CQ's cursor (ibv_start_poll, ibv_next_poll, ibv_end_poll) as a
// loop over callables, so it is tested without a device: fills `out` until
// the CQ says ENOENT (drained) or `out` is full; an error keeps what was read.
// end() follows only a successful start: EBUSY (a wall-clock CQ while the
// clock info is refreshed) and other start errors leave the CQ unlocked.
// start(), next() -> 0, ENOENT or an errno; read(Completion&) reads the current one.
template <typename Start, typename Next, typename Read, typename End>
CqPollResult PollCursor(std::span<Completion> out, Start&& start, Next&& next, Read&& read,
                        End&& end) {
  CqPollResult result;
  if (out.empty()) return result;
  int rc = start();
  if (rc == ENOENT) return result;
  if (rc != 0) return CqPollResult{0, rc};
  while (true) {
    read(out[result.count++]);
    if (result.count == out.size()) break;
    rc = next();
    if (rc == ENOENT) break;
    if (rc != 0) {
      result.error = rc;
      break;
    }
  }
  end();
  return result;
}

}  // namespace hostmesh::agent::verbs
