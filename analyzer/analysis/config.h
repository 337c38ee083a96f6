#pragma once

#include <chrono>
#include <cstdint>

#include "analyzer/analysis/confidence_calibration.h"

namespace hostmesh::analysis {

using std::chrono::nanoseconds;

struct AnalysisConfig {
  // Windows are aligned to multiples of `window` since the Unix epoch.
  nanoseconds window = std::chrono::seconds{20};
  // A window is judged once the analyzer's clock passes its end by this much;
  // results of a judged window arriving later are counted as late, not analysed.
  nanoseconds grace = std::chrono::seconds{10};
  // Results stamped further than this ahead of the analyzer's clock are refused
  // (a host clock gone wrong must not open windows in the future).
  nanoseconds max_future = std::chrono::seconds{60};

  // Paper: more than this share of an RNIC's probes time out -> anomalous.
  double rnic_anomalous_ratio = 0.10;
  // ...and its timeouts stay RNIC problems this long after the window.
  nanoseconds rnic_sticky = std::chrono::seconds{60};
  // Blamed RNICs losing at least this share are "down" rather than "lossy".
  double rnic_down_ratio = 0.90;
  // An RNIC that could not send at least this share of its own probes (its
  // port down, a QP in error) while more than rnic_anomalous_ratio of the
  // probes to it were lost is "down", whatever the inference estimates: in
  // the windows where its loss estimate still builds up it would read "lossy".
  // YAML: thresholds.rnic_down_send_failures.
  double rnic_down_send_failure_share = 0.5;

  // Loss localization across windows (sequential_inference.h). A component is
  // a culprit once its accumulated evidence shows it losing at least
  // `min_loss` more than the ambient path loss (estimated from the data,
  // starting from `prior_background_loss`), with false culprits held near
  // `false_alarms_per_window` for the whole fleet; or at once when one window
  // alone is conclusive (Poisson tail below window_alpha over all components,
  // with at least min_failures failures).
  double min_loss = 0.003;
  double prior_background_loss = 1e-3;  // conservative until the data speaks
  double false_alarms_per_window = 1e-4;
  double window_alpha = 1e-4;
  std::uint32_t min_failures = 3;
  // Route churn (IsChurn, flap_watch.h): a culprit link beside a flapping
  // one is its shadow unless its failures outside the flap's down episodes
  // are beyond chance at the background at churn_own_alpha (and a fault's
  // excess), or outright when at least churn_inside of its failures were
  // sent inside. 1 leaves it to the test outside: a lower share also takes
  // for churn a fault of its own whose paths the flap's episodes cover. The
  // test weighs a flap's shadows (every flap makes a few: 2 to 4 detour
  // links, judged every window it lasts, 180 an hour) against a fault of its
  // own beside a flap (rare), so its bar is well past even odds: 1e-3 takes
  // a shadow for a fault about once in two hours of flapping.
  double churn_inside = 1.0;
  double churn_own_alpha = 1e-3;
  std::uint32_t max_culprits = 64;  // per window and kind
  // A link routing has withdrawn (route_watch.h): named when fresh ECMP draws
  // at its rail switch missed it so often that a link in use would have been
  // missed with at most this chance. Per link and decision: a fleet draws
  // about a million times a day per rail switch at 10,000 hosts. The same bar
  // names a switch whose up-links every rail switch avoids (window_judge_routes.cc).
  double route_withdrawn_alpha = 1e-12;
  // ...and seen as avoided (not yet named) past this chance: its probes on
  // paths traced before routing moved them are no sign of health then, so an
  // open incident on it (or on a switch all of whose watched up-links are
  // avoided) is not resolved by them. A link in use taken for avoided only
  // holds an incident on it open a little longer, so the bar is loose; it is
  // reached at a quarter of the draws withdrawal needs (24 at k = 4).
  double route_avoided_alpha = 1e-3;

  // Latency inference (one window): a component is blamed when it explains at
  // least min_failures slow probes, this many standard deviations above the
  // background share of slow probes.
  double min_z = 4.0;

  // A latency hotspot: a link whose paths' median network latency exceeds the
  // fleet's by at least this much over the link's own baseline, and by
  // hotspot_noise_z times the spread of all paths' excesses in the window
  // (latency_hotspots.h). RoCE congestion adds tens of microseconds, and a
  // fail-slow port worth naming adds 20 us or more on average. A queue's wait
  // is exponential-like (none for some packets, a long tail for others), so
  // its median is about two thirds of its mean, and its level wanders: half
  // the smallest mean worth naming still finds it in most windows. The bar
  // is a delay, not a count, so it holds at any fleet size; the noise term
  // raises it where the fabric's own paths scatter more.
  nanoseconds hotspot_min_excess = std::chrono::microseconds{10};
  double hotspot_noise_z = 4.0;
  // A hotspot opens its incident once found in this many consecutive windows.
  // Congestion that moves (incast, colliding elephant flows) and a busy
  // host's late software timestamps heat a link for a window or two; a
  // fail-slow link worth a ticket lasts tens of minutes. A link adding more
  // than slow_latency_floor (every probe across it slow by the paper's bar)
  // opens at once: congestion in a lossless fabric does not do that.
  int hotspot_open_windows = 3;

  // For the paper's voting on slow probes: a probe is slow when its network
  // latency (t3-t2) exceeds
  // max(slow_latency_floor, slow_latency_factor x the last window's P50).
  nanoseconds slow_latency_floor = std::chrono::microseconds{500};
  double slow_latency_factor = 10.0;
  double background_slow = 0.001;

  // A host is CPU-overloaded when its P90 processing delay exceeds
  // proc_factor x the median of all hosts' P90 and by at least proc_min_excess.
  double proc_factor = 3.0;
  nanoseconds proc_min_excess = std::chrono::microseconds{100};
  std::uint32_t proc_min_samples = 20;

  // An incident resolves after this many windows in which its suspect was
  // observed (probes crossed it) and found healthy.
  int resolve_after_clean_windows = 2;
  // ...or after this many windows with no observation of it at all.
  int resolve_after_unobserved_windows = 15;
  // A probe 5-tuple's path is forgotten once no report and no probe touched it
  // for this long (it is gone by 1.3 x path_ttl). Agents rotate source ports
  // (a port lives 4 min in a pool by default) and re-report a live 5-tuple's
  // path every few minutes (traceroute report period 5 min); a live 5-tuple is
  // probed every pool_size x (NICs - 1) x interval (16 x 7 x 100 ms = 11 s by
  // default). So 5 min keeps every live path and forgets a rotated-out one
  // within minutes. At least window + grace: a path reported while a window is
  // open must still be there when it is judged.
  nanoseconds path_ttl = std::chrono::minutes{5};
  // 5-tuples with a path one host may hold (path_table.h: past it, its new
  // ones are refused and its idle ones evicted early). An honest agent holds
  // NIC pairs x pool size x about 2.25 (path_ttl of rotation at 25% a
  // minute): 2,000 at 8 NICs, 36,000 at 32, the most an agent may have.
  std::uint32_t max_paths_per_host = 65'536;
  // Example paths kept in an incident's evidence.
  std::size_t max_example_paths = 3;

  // Raw scores to the probability a verdict is right, per kind of verdict
  // (confidence_calibration.h); fitted on the simulator's suite.
  ConfidenceCalibration confidence = DefaultConfidenceCalibration();
};

}  // namespace hostmesh::analysis
