// ingot/passes/prove.hpp — a static proof that every memory access of a kernel is in range and
// that no integer index arithmetic wraps, for every thread of a launch.
//
// What is proven, for every work-group and thread id of the launches ProveOptions describes and
// every value of the run-time scalars that satisfies the kernel's preconditions (fixed scalars
// take their value):
//   - every Load, Store, Atomic, LoadVec/StoreVec, CopyAsync (both sides) and LoadMatrix row has
//     0 <= index and index + width <= extent (a global buffer's declared extent, evaluated
//     exactly as runtime::check_args does; a shared array's count), and vector, copy and matrix
//     accesses have an index that is a multiple of their width;
//   - no Add, Sub, Mul, Neg or Shl in the integer arithmetic that computes an index wraps its type,
//     no conversion between integer types there changes the value, and no division there divides
//     by zero: the IR defines wrap-around, but a wrapped index is the bug a 32-bit offset on a long
//     sequence causes, and the expression named is the one that needs 64 bits.
// Each obligation holds under its path condition: the enclosing If guards, the For loop ranges,
// the Select that chooses the value. Loaded data, shuffled and mma values are unknowns (any value);
// a mutable variable assigned in a loop is any value of its type at the loop's head, so an index
// carried through one may be reported as unknown rather than proved.
//
// Interval arithmetic proves what it can; the rest goes to Z3 over bit-vectors (the faithful model
// of wrapping integer arithmetic; division and modulo exact). A refuted obligation comes with a
// witness: the launch, the failing thread's ids and the scalars, which the checked interpreter
// replays as the out-of-range access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingot/ir.hpp"

namespace ingot::passes {

// The prover's version, part of the key of every cached proof result (`ingot prove`'s result cache): bump it whenever
// a change to this pass can change what a proof establishes or what it reports (obligations, counts), so that no
// result of an older prover is taken for one of this prover.
inline constexpr const char* kProverVersion = "1";

// The launches a proof covers.
struct ProveOptions {
  // Threads per work-group on each axis (kernels are traced for their work-group size).
  std::array<std::uint32_t, 3> group_size{1, 1, 1};
  // Work-groups on each axis; nullopt: every count whose grid fits 32-bit program ids.
  std::optional<std::array<std::uint32_t, 3>> groups;
  // Run-time scalars fixed to a value (canonical bits, see scalar_eval.hpp), by parameter name;
  // the others range over every value that satisfies the kernel's preconditions.
  std::map<std::string, std::uint64_t> scalars;
  // Whether index arithmetic must not wrap (off: only ranges and alignment are proven).
  bool check_overflow = true;
  // Per solver query; a query that runs out is reported as unknown.
  unsigned smt_timeout_ms = 30000;
};

enum class ProofStatus { Proved, Refuted, Unknown };
// Launchable: some launch satisfies the preconditions and the extents' types (else every access is vacuously in
// range and every launch would be refused).
enum class ObligationKind { InRange, Aligned, NoWrap, Launchable };

// A launch on which an obligation fails: replaying it (these scalars, this grid) makes thread
// (group_id, local_id) perform the failing access or arithmetic.
struct Witness {
  std::array<std::uint32_t, 3> groups{1, 1, 1};
  std::array<std::uint32_t, 3> group_id{0, 0, 0};
  std::array<std::uint32_t, 3> local_id{0, 0, 0};
  std::map<std::string, std::uint64_t> scalars;  // canonical bits of every run-time scalar
  std::int64_t index = 0;                        // InRange/Aligned: the index the thread uses
  std::uint64_t extent = 0;                      // InRange/Aligned: the elements of the buffer
};

// One obligation not proven.
struct ProofIssue {
  ObligationKind kind = ObligationKind::InRange;
  ProofStatus status = ProofStatus::Unknown;  // Refuted (with a witness) or Unknown
  std::uint32_t loc = 0;                      // the statement's location
  std::string stmt;                           // the statement, printed
  std::string buffer;                         // InRange/Aligned: the buffer or shared array
  std::string expr;                           // the index, or the expression that wraps
  std::string detail;                         // what fails, with the witness's values, or why unknown
  std::optional<Witness> witness;
};

struct ProofReport {
  std::size_t obligations = 0;   // every obligation checked
  std::size_t by_intervals = 0;  // proven by interval arithmetic
  std::size_t smt_queries = 0;   // solver queries made
  std::vector<ProofIssue> issues;
  [[nodiscard]] bool proved() const { return issues.empty(); }
};

// Proves k's accesses in range (and its index arithmetic free of wrap-around) for the launches
// `options` describes. Throws std::invalid_argument when a fixed scalar names no scalar parameter
// or the options' geometry is empty.
[[nodiscard]] ProofReport prove(const ir::Kernel& k, const ProveOptions& options);
// Whether this build has the solver: false where ingot was configured without Z3, and prove() then throws
// std::runtime_error saying what to install.
[[nodiscard]] bool prover_available();

// "in range", "aligned", "no wrap-around".
[[nodiscard]] std::string obligation_name(ObligationKind k);
// One line per issue: the statement, the buffer, the expression and the detail.
[[nodiscard]] std::string describe(const ProofIssue& issue);

}  // namespace ingot::passes
