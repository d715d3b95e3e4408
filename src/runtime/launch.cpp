// Launch geometry helpers.
#include "ingot/runtime/launch.hpp"

#include <stdexcept>

namespace ingot::runtime {

std::uint64_t LaunchGeometry::threads_per_group() const {
  return static_cast<std::uint64_t>(group_size[0]) * group_size[1] * group_size[2];
}
std::uint64_t LaunchGeometry::total_groups() const { return std::uint64_t{groups[0]} * groups[1] * groups[2]; }
std::uint64_t LaunchGeometry::total_threads() const { return threads_per_group() * total_groups(); }
std::string LaunchGeometry::describe() const {
  return "grid " + std::to_string(groups[0]) + "x" + std::to_string(groups[1]) + "x" + std::to_string(groups[2]) +
         " groups of " + std::to_string(group_size[0]) + "x" + std::to_string(group_size[1]) + "x" +
         std::to_string(group_size[2]);
}

LaunchGeometry grid_3d(std::array<std::uint64_t, 3> n, std::array<std::uint32_t, 3> g) {
  LaunchGeometry geo;
  for (int a = 0; a < 3; ++a) {
    if (g[a] == 0)
      throw std::invalid_argument("work-group size on axis " + std::to_string(a) + " is 0: use at least 1");
    const std::uint64_t groups = n[a] == 0 ? 1 : (n[a] + g[a] - 1) / g[a];
    if (groups > 0xffffffffull) {
      throw std::invalid_argument("grid of " + std::to_string(n[a]) + " threads on axis " + std::to_string(a) +
                                  " needs more than 2^32 - 1 work-groups: use larger work-groups or more axes");
    }
    geo.groups[a] = static_cast<std::uint32_t>(groups);
    geo.group_size[a] = g[a];
  }
  return geo;
}
LaunchGeometry grid_1d(std::uint64_t n, std::uint32_t group) { return grid_3d({n, 1, 1}, {group, 1, 1}); }
LaunchGeometry grid_2d(std::uint64_t nx, std::uint64_t ny, std::uint32_t gx, std::uint32_t gy) {
  return grid_3d({nx, ny, 1}, {gx, gy, 1});
}

void validate_geometry(const LaunchGeometry& g, std::uint64_t max_group_threads) {
  for (int a = 0; a < 3; ++a) {
    if (g.groups[a] == 0 || g.group_size[a] == 0) {
      throw std::invalid_argument("launch " + g.describe() + " is empty on axis " + std::to_string(a) +
                                  ": every extent must be at least 1");
    }
  }
  if (g.threads_per_group() > max_group_threads) {
    throw std::invalid_argument("launch " + g.describe() + ": a work-group of " +
                                std::to_string(g.threads_per_group()) + " threads exceeds this backend's limit of " +
                                std::to_string(max_group_threads));
  }
}

}  // namespace ingot::runtime
