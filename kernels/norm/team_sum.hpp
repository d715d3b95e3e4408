// kernels/norm/team_sum.hpp — the sum (or maximum) of one f32 over a team of consecutive threads (a row's threads),
// received by every thread of the team.
//
// Within a warp a butterfly of shuffles (lane l adds lane l ^ o's value): addition is commutative, so both partners
// of every exchange compute the same sum and all 32 lanes end with bitwise the same total, which the kernels need so
// that every thread of a row normalises with the same statistics. A team of several warps then exchanges the warps'
// totals through shared memory (one barrier) and every warp reduces them the same way. Backends without sub-group
// shuffles get them through shared memory (passes::legalise), so this runs everywhere.
#pragma once

#include <cstdint>
#include <string>

#include "ingot/dsl.hpp"

namespace ingot::kernels {

// How a team combines its values: a sum, or a maximum (whose identity, for the lanes past the warps, is -FLT_MAX:
// the row kernels' values are finite).
enum class TeamOp { sum, max };

// The sum (or maximum) of v over the `threads` threads of each team (threads a multiple of 32; team t is the threads
// [t * threads, (t + 1) * threads) of the work-group, `teams` of them). Every thread of the work-group must call it
// (shuffles and a barrier); tid is local_id(0). `name` names the shared array, one per call: a second reduction in the
// same kernel writes its own array, so no barrier is needed between the two.
inline dsl::Val<f32> team_reduce(KernelBuilder& k, dsl::Val<f32> v, const dsl::Val<u32>& tid, std::uint32_t threads,
                                 std::uint32_t teams, const std::string& name, TeamOp op) {
  using namespace ingot::dsl;
  const auto combine = [&](const Val<f32>& x, const Val<f32>& y) { return op == TeamOp::sum ? x + y : max(x, y); };
  const auto lane = k.let("lane", tid & 31u);
  for (std::uint32_t o = 16; o >= 1; o /= 2) v = k.let(name, combine(v, shuffle(v, lane ^ o, 32)));
  if (threads == 32) return v;
  const std::uint32_t warps = threads / 32;
  auto partial = k.shared<f32>(name + "_warps", warps * teams);
  const auto warp = k.let("warp", tid >> 5u);
  if_(lane == 0u, [&] { store(partial, warp, v); });
  k.barrier();
  // Lane l < warps of every warp takes warp l's total of its team; the others the identity.
  std::uint32_t span = 1;  // the smallest power of two >= warps
  while (span < warps) span *= 2;
  const auto first = k.let(name + "_first", (warp / warps) * warps);
  const auto identity = k.constant<f32>(op == TeamOp::sum ? 0.0f : -3.40282347e38f);
  Val<f32> t = k.let(name + "_part", select(lane < warps, load(partial, first + min(lane, warps - 1u)), identity));
  for (std::uint32_t o = span / 2; o >= 1; o /= 2) t = k.let(name, combine(t, shuffle(t, lane ^ o, 32)));
  // Lanes [0, span) hold the total; lanes past them combined identities: each takes it from its lane modulo span.
  if (span < 32) t = k.let(name, shuffle(t, lane & (span - 1u), 32));
  return t;
}

// team_reduce's sum.
inline dsl::Val<f32> team_sum(KernelBuilder& k, const dsl::Val<f32>& v, const dsl::Val<u32>& tid, std::uint32_t threads,
                              std::uint32_t teams, const std::string& name) {
  return team_reduce(k, v, tid, threads, teams, name, TeamOp::sum);
}

}  // namespace ingot::kernels
