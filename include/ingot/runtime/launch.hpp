// ingot/runtime/launch.hpp — launch geometry: a grid of work-groups times a work-group size.
//
// The grid is counted in whole work-groups, so a launch always covers a multiple of the group
// size: grid_1d(n, g) rounds n up, and the (groups*g - n) tail threads exist. Every kernel must
// guard them (see ir.hpp, "Tail threads").
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ingot::runtime {

struct LaunchGeometry {
  std::array<std::uint32_t, 3> groups{1, 1, 1};      // number of work-groups per axis
  std::array<std::uint32_t, 3> group_size{1, 1, 1};  // threads per work-group per axis

  [[nodiscard]] std::uint64_t threads_per_group() const;
  [[nodiscard]] std::uint64_t total_groups() const;  // work-groups of the grid, every axis
  [[nodiscard]] std::uint64_t total_threads() const;
  [[nodiscard]] std::string describe() const;  // "grid 4x1x1 groups of 256x1x1"
};

// ceil(n / group) groups of `group` threads on axis 0. Throws std::invalid_argument when
// group is 0 or the grid would not fit 32-bit indices.
[[nodiscard]] LaunchGeometry grid_1d(std::uint64_t n, std::uint32_t group);
// Two and three axes: each extent rounded up to whole groups.
[[nodiscard]] LaunchGeometry grid_2d(std::uint64_t nx, std::uint64_t ny, std::uint32_t gx, std::uint32_t gy);
[[nodiscard]] LaunchGeometry grid_3d(std::array<std::uint64_t, 3> n, std::array<std::uint32_t, 3> g);

// Throws std::invalid_argument with an actionable message if the geometry is empty or a group exceeds
// max_group_threads. Whether the kernel's program ids can index the grid is check_launch_bounds' (backend.hpp).
void validate_geometry(const LaunchGeometry& g, std::uint64_t max_group_threads);

}  // namespace ingot::runtime
