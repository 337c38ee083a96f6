#include "common/config/spelling.h"

#include <algorithm>

namespace hostmesh::config {

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment over three rolling rows (two back for the swap).
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const size_t allowed = std::max<size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: skip the quadratic
    // table for a word that cannot be close (a hostile 1 MB key, say).
    const size_t gap = word.size() > candidate.size() ? word.size() - candidate.size()
                                                      : candidate.size() - word.size();
    if (gap > allowed) continue;
    const size_t distance = EditDistance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace hostmesh::config
