// The checked interpreter: lockstep execution of each work-group under an active-lane mask.
#include "ingot/runtime/interp.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <deque>
#include <sstream>

#include "ingot/ir_print.hpp"
#include "ingot/scalar_eval.hpp"

namespace ingot::runtime {

namespace {

class InterpBuffer final : public DeviceBuffer {
 public:
  InterpBuffer(DType t, std::size_t count) : DeviceBuffer(t, count), data(poison_bytes(t, count)), written(count, 0) {}
  [[nodiscard]] std::string backend_name() const override { return "interp"; }
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> written;  // per element: 1 once uploaded or stored
};

InterpBuffer& as_interp(DeviceBuffer& b) {
  auto* p = dynamic_cast<InterpBuffer*>(&b);
  if (!p) throw ArgumentError("buffer belongs to backend '" + b.backend_name() + "', not 'interp'");
  return *p;
}

// The accesses of one shared array since the work-group's last barrier, per element: who wrote it and who read it
// in which barrier interval (epoch; 0: never). Two threads touching one element in one interval, at least one of them
// writing, race: the lockstep execution would hide it (every thread finishes a statement before the next begins),
// a GPU does not order them. An asynchronous copy writes its element at some moment between its issue and the wait
// that completes it: it counts as a write at the issue and at the wait, and any access to the element in between
// (pending: the copying thread) races with it.
struct SharedAccesses {
  static constexpr std::uint32_t kMany = 0xFFFFFFFFu;  // read by several threads
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;  // no copy in flight
  std::vector<std::uint32_t> w_epoch, w_lane, r_epoch, r_lane, pending;
  void reset(std::size_t n) {
    w_epoch.assign(n, 0);
    w_lane.assign(n, 0);
    r_epoch.assign(n, 0);
    r_lane.assign(n, 0);
    pending.assign(n, kNone);
  }
};

// One addressable memory: a global buffer or a shared array.
struct Memory {
  std::uint8_t* data = nullptr;
  std::uint8_t* written = nullptr;
  std::size_t count = 0;
  DType type = DType::f32;
  std::string name;
  SharedAccesses* race = nullptr;  // shared arrays: the accesses since the last barrier
  // Global buffers: per element, the launch-wide thread (1 + its linear id; 0: none) that stored it in this launch.
  // Two threads storing one element in one launch race: a GPU keeps either value (atomics are not stores here).
  std::vector<std::uint64_t>* writer = nullptr;
};

using Mask = std::vector<std::uint8_t>;

class GroupRunner {
 public:
  GroupRunner(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args, const InterpOptions& opt)
      : k_(k), g_(g), opt_(opt) {
    lanes_ = static_cast<std::size_t>(g.threads_per_group());
    globals_.resize(k.params.size());
    global_writers_.resize(k.params.size());
    scalars_.resize(k.params.size(), 0);
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      if (ir::is_buffer(k.params[i].kind)) {
        auto& b = as_interp(*std::get<BufferPtr>(args[i]));
        globals_[i] = Memory{b.data.data(), b.written.data(), b.count(), b.dtype(), k.params[i].name};
        if (opt.check_global_races && k.params[i].kind != ir::ParamKind::In) {
          global_writers_[i].assign(b.count(), 0);
          globals_[i].writer = &global_writers_[i];
        }
      } else {
        scalars_[i] = std::get<ScalarArg>(args[i]).bits;
      }
    }
    vars_.assign(k.vars.size(), {});
    vals_.assign(k.exprs.size(), {});
    stamp_.assign(k.exprs.size(), 0);
    shared_data_.resize(k.shared.size());
    shared_written_.resize(k.shared.size());
    shared_mem_.resize(k.shared.size());
    shared_race_.resize(k.shared.size());
    local_.resize(lanes_);
    for (std::size_t l = 0; l < lanes_; ++l) {
      local_[l] = {static_cast<std::uint32_t>(l % g.group_size[0]),
                   static_cast<std::uint32_t>((l / g.group_size[0]) % g.group_size[1]),
                   static_cast<std::uint32_t>(l / (static_cast<std::size_t>(g.group_size[0]) * g.group_size[1]))};
    }
  }

  void run_group(std::array<std::uint32_t, 3> group) {
    group_ = group;
    group_stamp_ = ++now_;
    for (auto& v : vars_) v.assign(lanes_, 0);
    open_copies_.assign(lanes_, {});
    committed_copies_.assign(lanes_, {});
    const Mask all(lanes_, 1);
    exec_block(k_.body, all);
    stmt_ = nullptr;
    for (std::size_t l = 0; l < lanes_; ++l) {
      std::vector<const PendingCopy*> left;
      for (const auto& grp : committed_copies_[l]) {
        for (const auto& c : grp) left.push_back(&c);
      }
      for (const auto& c : open_copies_[l]) left.push_back(&c);
      if (!left.empty()) {
        fail("thread ended with asynchronous copies not completed", l, "", 0, 0,
             std::to_string(left.size()) + " copies (the first at IR #" + std::to_string(left.front()->loc) +
                 "): follow every copy_async with async_commit and an async_wait that completes it");
      }
    }
  }

 private:
  // ---------------------------------------------------------------- load_matrix
  // Per sub-group of 32 lanes (ir.hpp, "Matrix loads"): every lane's row checked (in range, a
  // multiple of 8, written), then lane l receives elements 2(l%4), 2(l%4)+1 of the row of lane
  // 8i + l/4 as values 2i, 2i+1 (transposed: element l/4 of the rows of lanes 8i + 2(l%4) and 8i + 2(l%4) + 1).
  void exec_load_matrix(const ir::Stmt& s, const Mask& mask) {
    require_whole_group(mask, "load_matrix");
    if (lanes_ % ir::kMmaLanes != 0) {
      fail("load_matrix in a work-group that is not a whole number of warps", 0, "", 0, 0,
           "work-groups of " + std::to_string(lanes_) + " threads: launch work-groups of a multiple of " +
               std::to_string(ir::kMmaLanes) + " threads");
    }
    Memory& m = mem(s.mem);
    const std::uint64_t* idx = eval(s.a, mask);
    const DType it = k_.exprs[s.a].type;
    std::vector<std::size_t> row(lanes_);
    for (std::size_t l = 0; l < lanes_; ++l) {
      row[l] = checked_vector(m, it, idx[l], ir::kMatrixRow, l, "load_matrix row");
      for (std::size_t j = 0; j < ir::kMatrixRow; ++j) {
        if (opt_.check_uninitialized_reads && !m.written[row[l] + j]) {
          fail("read of an element never written (poisoned)", l, "", 0, 0,
               "buffer '" + m.name + "' element " + std::to_string(row[l] + j) + " (load_matrix row)");
        }
        note_access(m, row[l] + j, l, false, "load_matrix row");
      }
    }
    for (std::size_t l = 0; l < lanes_; ++l) {
      const std::size_t base = l / ir::kMmaLanes * ir::kMmaLanes, lane = l % ir::kMmaLanes;
      for (std::size_t i = 0; i < ir::kMatrixCount; ++i) {
        if (s.transpose) {  // elements lane/4 of rows 2(lane%4) and 2(lane%4)+1
          const std::size_t r = base + 8 * i + 2 * (lane % 4);
          vars_[s.vars[2 * i]][l] = read_elem(m, row[r] + lane / 4);
          vars_[s.vars[2 * i + 1]][l] = read_elem(m, row[r + 1] + lane / 4);
          continue;
        }
        const std::size_t src = row[base + 8 * i + lane / 4] + 2 * (lane % 4);
        vars_[s.vars[2 * i]][l] = read_elem(m, src);
        vars_[s.vars[2 * i + 1]][l] = read_elem(m, src + 1);
      }
    }
  }

  // ---------------------------------------------------------------- mma
  // D = C + A*B per sub-group of 32 lanes (ir.hpp): A and B rounded to s.elem, the products
  // (exact in f32) summed in f64, then rounded to f32.
  void exec_mma(const ir::Stmt& s, const Mask& mask) {
    require_whole_group(mask, "mma");
    if (lanes_ % ir::kMmaLanes != 0) {
      fail("mma in a work-group that is not a whole number of warps", 0, "", 0, 0,
           "work-groups of " + std::to_string(lanes_) + " threads: launch work-groups of a multiple of " +
               std::to_string(ir::kMmaLanes) + " threads");
    }
    std::array<const std::uint64_t*, ir::kMmaOperands> ops{};
    for (std::size_t j = 0; j < ops.size(); ++j) ops[j] = eval(s.values[j], mask);
    const auto f32_at = [&](std::size_t j, std::size_t lane) {
      return std::bit_cast<float>(static_cast<std::uint32_t>(ops[j][lane]));
    };
    const auto rounded = [&](std::size_t j, std::size_t lane) {
      const float v = f32_at(j, lane);
      return s.elem == DType::bf16 ? static_cast<double>(bf16_bits_to_f32(f32_to_bf16_bits(v)))
                                   : static_cast<double>(f16_bits_to_f32(f32_to_f16_bits(v)));
    };
    for (std::size_t base = 0; base < lanes_; base += ir::kMmaLanes) {
      // A[16][16], B[16][8] from the lanes' fragments
      std::array<std::array<double, 16>, 16> A{};
      std::array<std::array<double, 8>, 16> B{};
      for (std::size_t l = 0; l < ir::kMmaLanes; ++l) {
        const std::size_t g = l / 4, t = l % 4;
        for (std::size_t i = 0; i < 8; ++i)
          A[g + 8 * ((i / 2) % 2)][2 * t + i % 2 + 8 * (i / 4)] = rounded(i, base + l);
        for (std::size_t i = 0; i < 4; ++i) B[2 * t + i % 2 + 8 * (i / 2)][g] = rounded(8 + i, base + l);
      }
      for (std::size_t l = 0; l < ir::kMmaLanes; ++l) {
        const std::size_t g = l / 4, t = l % 4;
        for (std::size_t i = 0; i < 4; ++i) {
          const std::size_t row = g + 8 * (i / 2), col = 2 * t + i % 2;
          double acc = f32_at(12 + i, base + l);
          for (std::size_t kk = 0; kk < 16; ++kk) acc += A[row][kk] * B[kk][col];
          vars_[s.vars[i]][base + l] = std::bit_cast<std::uint32_t>(static_cast<float>(acc));
        }
      }
    }
  }

  // ---------------------------------------------------------------- asynchronous copies
  // A started copy (ir.hpp, "Asynchronous copies"): performed at the wait that completes it.
  struct PendingCopy {
    std::uint32_t shared = 0;  // destination array
    std::size_t dst = 0;       // first destination element
    std::uint32_t src = 0;     // source parameter
    std::size_t from = 0;      // first source element
    std::uint32_t width = 0;
    bool ok = true;  // false: zeros
    std::uint32_t loc = 0;
  };

  void exec_copy_async(const ir::Stmt& s, const Mask& mask) {
    Memory& dst = mem(ir::MemRef{ir::Space::Shared, s.shared});
    Memory& src = mem(s.mem);
    const std::uint64_t* di = eval(s.a, mask);
    const std::uint64_t* si = eval(s.b, mask);
    const std::uint64_t* ok = eval(s.c, mask);
    for (std::size_t l = 0; l < lanes_; ++l) {
      if (!mask[l]) continue;
      PendingCopy c;
      c.shared = s.shared;
      c.dst = checked_vector(dst, k_.exprs[s.a].type, di[l], s.count, l, "copy_async destination");
      c.src = s.mem.id;
      c.from = checked_vector(src, k_.exprs[s.b].type, si[l], s.count, l, "copy_async source");
      c.width = s.count;
      c.ok = (ok[l] & 1u) != 0;
      c.loc = s.loc;
      for (std::uint32_t j = 0; j < c.width; ++j) {  // the copy may write its element from now until its wait
        note_access(dst, c.dst + j, l, true, "asynchronous copy (issued)");
        if (dst.race) dst.race->pending[c.dst + j] = static_cast<std::uint32_t>(l);
      }
      open_copies_[l].push_back(c);
    }
  }

  void exec_async_wait(const ir::Stmt& s, const Mask& mask) {
    for (std::size_t l = 0; l < lanes_; ++l) {
      if (!mask[l]) continue;
      auto& groups = committed_copies_[l];
      while (groups.size() > s.count) {
        for (const PendingCopy& c : groups.front()) {
          Memory& dst = shared_mem_[c.shared];
          const Memory& src = globals_[c.src];
          for (std::uint32_t j = 0; j < c.width; ++j) {
            if (c.ok && opt_.check_uninitialized_reads && !src.written[c.from + j]) {
              fail("asynchronous copy of an element never written (poisoned)", l, "", 0, 0,
                   "buffer '" + src.name + "' element " + std::to_string(c.from + j) + ", copied by IR #" +
                       std::to_string(c.loc));
            }
            if (dst.race) dst.race->pending[c.dst + j] = SharedAccesses::kNone;
            note_access(dst, c.dst + j, l, true, "asynchronous copy");
            write_elem(dst, c.dst + j, c.ok ? read_elem(src, c.from + j) : 0);
          }
        }
        groups.pop_front();
      }
    }
  }

  // ---------------------------------------------------------------- errors
  // A barrier, shuffle or mma must be reached by every thread of the work-group.
  void require_whole_group(const Mask& mask, const std::string& what) const {
    std::size_t active = 0;
    std::size_t first_missing = lanes_;
    for (std::size_t l = 0; l < lanes_; ++l) {
      if (mask[l]) {
        ++active;
      } else if (first_missing == lanes_) {
        first_missing = l;
      }
    }
    if (active != lanes_) {
      fail(what + " under divergent control flow", first_missing, "", 0, 0,
           "reached by " + std::to_string(active) + " of " + std::to_string(lanes_) +
               " threads of the work-group; this thread did not reach it");
    }
  }

  [[noreturn]] void fail(const std::string& problem, std::size_t lane, const std::string& buffer = "",
                         std::int64_t index = 0, std::uint64_t extent = 0, const std::string& detail = "") const {
    const auto& loc = local_[lane];
    std::array<std::uint64_t, 3> global{};
    for (int a = 0; a < 3; ++a) global[a] = static_cast<std::uint64_t>(group_[a]) * g_.group_size[a] + loc[a];
    std::ostringstream os;
    os << "kernel '" << k_.name << "': " << problem;
    if (!buffer.empty()) {
      os << " on buffer '" << buffer << "': index " << index << " is outside [0, " << extent << ")";
    }
    if (!detail.empty()) os << ": " << detail;
    os << "; thread group (" << group_[0] << "," << group_[1] << "," << group_[2] << ") local (" << loc[0] << ","
       << loc[1] << "," << loc[2] << ") = global (" << global[0] << "," << global[1] << "," << global[2] << ") of "
       << g_.describe();
    const std::string stmt = stmt_ ? ir::print_stmt_line(k_, *stmt_) : std::string("?");
    os << "; at IR #" << (stmt_ ? stmt_->loc : 0) << ": " << stmt;
    LaunchError e(os.str());
    e.kernel = k_.name;
    e.problem = problem;
    e.buffer = buffer;
    e.index = index;
    e.extent = extent;
    e.group = group_;
    e.local = loc;
    e.stmt_loc = stmt_ ? stmt_->loc : 0;
    e.stmt = stmt;
    throw e;
  }

  // ---------------------------------------------------------------- memory
  Memory& mem(ir::MemRef m) {
    if (m.space == ir::Space::Global) return globals_[m.id];
    Memory& s = shared_mem_[m.id];
    if (!s.data) fail("use of shared array before its declaration", 0);
    return s;
  }

  std::size_t checked_index(Memory& m, DType index_type, std::uint64_t bits, std::size_t lane, const char* what) {
    const std::int64_t idx = ir::int_of_bits(index_type, bits);
    if (idx < 0 || static_cast<std::uint64_t>(idx) >= m.count) {
      fail(std::string("out-of-range ") + what, lane, m.name, idx, m.count);
    }
    return static_cast<std::size_t>(idx);
  }

  // First element of a vector access of w elements: in range and a multiple of w.
  std::size_t checked_vector(Memory& m, DType index_type, std::uint64_t bits, std::size_t w, std::size_t lane,
                             const char* what) {
    const std::int64_t idx = ir::int_of_bits(index_type, bits);
    if (idx < 0 || static_cast<std::uint64_t>(idx) >= m.count)
      fail(std::string("out-of-range ") + what, lane, m.name, idx, m.count);
    if (static_cast<std::uint64_t>(idx) + w > m.count) {
      fail(std::string("out-of-range ") + what, lane, m.name, idx + static_cast<std::int64_t>(w) - 1, m.count,
           "the last of its " + std::to_string(w) + " elements");
    }
    if (static_cast<std::uint64_t>(idx) % w != 0) {
      fail(std::string("misaligned ") + what, lane, "", 0, 0,
           "buffer '" + m.name + "' index " + std::to_string(idx) + " is not a multiple of the vector width " +
               std::to_string(w));
    }
    return static_cast<std::size_t>(idx);
  }

  std::uint64_t read_elem(const Memory& m, std::size_t i) const {
    std::uint64_t v = 0;
    const std::size_t es = dtype_size(m.type);
    std::memcpy(&v, m.data + i * es, es);
    return v;
  }
  static void write_elem(Memory& m, std::size_t i, std::uint64_t v) {
    const std::size_t es = dtype_size(m.type);
    std::memcpy(m.data + i * es, &v, es);
    m.written[i] = 1;
  }

  // Thread `lane` of this work-group stores element i of global buffer m: another thread's store of it in this launch
  // is a write-write race (Memory::writer).
  void note_global_store(Memory& m, std::size_t i, std::size_t lane, const char* what) {
    const std::uint64_t group_linear =
        group_[0] + static_cast<std::uint64_t>(g_.groups[0]) * (group_[1] + std::uint64_t{g_.groups[1]} * group_[2]);
    const std::uint64_t me = 1 + group_linear * lanes_ + lane;
    std::uint64_t& w = (*m.writer)[i];
    if (w != 0 && w != me) {
      const std::uint64_t other = w - 1, og = other / lanes_, ol = other % lanes_;
      const std::uint64_t gx = og % g_.groups[0], gy = og / g_.groups[0] % g_.groups[1],
                          gz = og / g_.groups[0] / g_.groups[1];
      fail("global-memory race (write after write)", lane, "", 0, 0,
           "buffer '" + m.name + "' element " + std::to_string(i) + ": " + what + " by this thread, also stored by " +
               "thread " + std::to_string(ol) + " of work-group (" + std::to_string(gx) + ", " + std::to_string(gy) +
               ", " + std::to_string(gz) +
               ") in this launch: a GPU keeps either value; give each element one writer (or use an atomic)");
    }
    w = me;
  }

  // Thread `lane` reads (write = false) or writes element i of m: a shared array's element that another thread wrote
  // since the last barrier, or (for a write) read, is a race; so is any access to an element an asynchronous copy is
  // still writing (SharedAccesses).
  void note_access(Memory& m, std::size_t i, std::size_t lane, bool write, const char* what) {
    if (m.writer && write) note_global_store(m, i, lane, what);
    if (!m.race) return;
    SharedAccesses& a = *m.race;
    const auto l = static_cast<std::uint32_t>(lane);
    if (a.pending[i] != SharedAccesses::kNone) {
      fail("shared-memory race (access during an asynchronous copy)", lane, "", 0, 0,
           "buffer '" + m.name + "' element " + std::to_string(i) + ": " + what + " by this thread while thread " +
               std::to_string(a.pending[i]) +
               "'s asynchronous copy into it is in flight (issued, not yet completed by its async_wait)");
    }
    const auto race = [&](const std::string& kind, std::uint32_t other) {
      fail(std::string("shared-memory race (") + kind + ")", lane, "", 0, 0,
           "buffer '" + m.name + "' element " + std::to_string(i) + ": " + what + " by this thread, " +
               (kind == "write after read" ? "read" : "written") + " by " +
               (other == SharedAccesses::kMany ? std::string("several other threads")
                                               : "thread " + std::to_string(other) + " of the work-group") +
               " with no barrier between");
    };
    if (a.w_epoch[i] == epoch_ && a.w_lane[i] != l) race(write ? "write after write" : "read after write", a.w_lane[i]);
    if (write) {
      if (a.r_epoch[i] == epoch_ && a.r_lane[i] != l) race("write after read", a.r_lane[i]);
      a.w_epoch[i] = epoch_;
      a.w_lane[i] = l;
      return;
    }
    if (a.r_epoch[i] != epoch_) {
      a.r_epoch[i] = epoch_;
      a.r_lane[i] = l;
    } else if (a.r_lane[i] != l) {
      a.r_lane[i] = SharedAccesses::kMany;
    }
  }

  // ---------------------------------------------------------------- expressions
  const std::uint64_t* eval(ir::ExprId e, const Mask& mask) {
    const ir::Node& n = k_.exprs[e];
    if (n.op == ir::Op::VarRef) return vars_[n.imm].data();
    const bool invariant = ir::op_info(n.op).arity == 0;  // constants, scalars, builtins
    if (invariant ? stamp_[e] >= group_stamp_ : stamp_[e] == now_) return vals_[e].data();
    auto& out = vals_[e];
    out.resize(lanes_);
    stamp_[e] = now_;
    switch (n.op) {
      case ir::Op::Const: std::fill(out.begin(), out.end(), n.imm); return out.data();
      case ir::Op::ParamRef: std::fill(out.begin(), out.end(), scalars_[n.imm]); return out.data();
      case ir::Op::LocalId:
        for (std::size_t l = 0; l < lanes_; ++l) out[l] = local_[l][n.imm];
        return out.data();
      case ir::Op::GroupId: std::fill(out.begin(), out.end(), group_[n.imm]); return out.data();
      case ir::Op::GroupSize: std::fill(out.begin(), out.end(), g_.group_size[n.imm]); return out.data();
      case ir::Op::NumGroups: std::fill(out.begin(), out.end(), g_.groups[n.imm]); return out.data();
      case ir::Op::ProgramId:
        for (std::size_t l = 0; l < lanes_; ++l) {
          out[l] = static_cast<std::uint64_t>(group_[n.imm]) * g_.group_size[n.imm] + local_[l][n.imm];
        }
        return out.data();
      case ir::Op::Load: {
        Memory& m = mem(ir::decode_mem(n.imm));
        const std::uint64_t* idx = eval(n.a, mask);
        const DType it = k_.exprs[n.a].type;
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          const std::size_t i = checked_index(m, it, idx[l], l, "load");
          if (opt_.check_uninitialized_reads && !m.written[i]) {
            fail("read of an element never written (poisoned)", l, "", 0, 0,
                 "buffer '" + m.name + "' element " + std::to_string(i));
          }
          note_access(m, i, l, false, "load");
          out[l] = read_elem(m, i);
        }
        return out.data();
      }
      default: break;
    }
    const int arity = ir::op_info(n.op).arity;
    const std::uint64_t* a = eval(n.a, mask);
    const std::uint64_t* b = arity > 1 ? eval(n.b, mask) : nullptr;
    const std::uint64_t* c = arity > 2 ? eval(n.c, mask) : nullptr;
    // eval() of operands may have resized nothing of ours, but keep `out` fresh.
    auto& res = vals_[e];
    const DType at = k_.exprs[n.a].type;
    std::string err;
    for (std::size_t l = 0; l < lanes_; ++l) {
      if (!mask[l]) continue;
      const auto v = ir::eval_op(n.op, n.type, at, a[l], b ? b[l] : 0, c ? c[l] : 0, &err);
      if (!v) fail(err, l);
      res[l] = *v;
    }
    return res.data();
  }

  // ---------------------------------------------------------------- statements
  static bool any(const Mask& m) {
    for (auto x : m) {
      if (x) return true;
    }
    return false;
  }

  void exec_block(const ir::Block& b, const Mask& mask) {
    for (const ir::Stmt& s : b) exec(s, mask);
  }

  void exec(const ir::Stmt& s, const Mask& mask) {
    stmt_ = &s;
    ++now_;
    switch (s.kind) {
      case ir::StmtKind::Block: exec_block(s.body, mask); break;
      case ir::StmtKind::Let:
      case ir::StmtKind::Assign: {
        const std::uint64_t* v = eval(s.a, mask);
        auto& var = vars_[s.var];
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (mask[l]) var[l] = v[l];
        }
        break;
      }
      case ir::StmtKind::Store: {
        Memory& m = mem(s.mem);
        const std::uint64_t* idx = eval(s.a, mask);
        const std::uint64_t* v = eval(s.b, mask);
        const DType it = k_.exprs[s.a].type;
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          const std::size_t i = checked_index(m, it, idx[l], l, "store");
          note_access(m, i, l, true, "store");
          write_elem(m, i, v[l]);
        }
        break;
      }
      case ir::StmtKind::LoadVec: {
        Memory& m = mem(s.mem);
        const std::uint64_t* idx = eval(s.a, mask);
        const DType it = k_.exprs[s.a].type;
        const std::size_t w = s.vars.size();
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          const std::size_t i0 = checked_vector(m, it, idx[l], w, l, "load_vec");
          for (std::size_t j = 0; j < w; ++j) {
            if (opt_.check_uninitialized_reads && !m.written[i0 + j]) {
              fail("read of an element never written (poisoned)", l, "", 0, 0,
                   "buffer '" + m.name + "' element " + std::to_string(i0 + j));
            }
            note_access(m, i0 + j, l, false, "load_vec");
            vars_[s.vars[j]][l] = read_elem(m, i0 + j);
          }
        }
        break;
      }
      case ir::StmtKind::StoreVec: {
        Memory& m = mem(s.mem);
        const std::uint64_t* idx = eval(s.a, mask);
        const DType it = k_.exprs[s.a].type;
        const std::size_t w = s.values.size();
        // Every value is evaluated before any element is written. Each result stays where eval
        // put it (one slot per expression) for the whole statement, so no copy is needed.
        std::vector<const std::uint64_t*>& vals = vec_values_;  // reused: no allocation per statement
        vals.resize(w);
        for (std::size_t j = 0; j < w; ++j) vals[j] = eval(s.values[j], mask);
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          const std::size_t i0 = checked_vector(m, it, idx[l], w, l, "store_vec");
          for (std::size_t j = 0; j < w; ++j) {
            note_access(m, i0 + j, l, true, "store_vec");
            write_elem(m, i0 + j, vals[j][l]);
          }
        }
        break;
      }
      case ir::StmtKind::If: {
        const std::uint64_t* c = eval(s.a, mask);
        Mask then_mask(lanes_, 0);
        Mask else_mask(lanes_, 0);
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          ((c[l] & 1u) ? then_mask : else_mask)[l] = 1;
        }
        if (any(then_mask)) exec_block(s.body, then_mask);
        if (any(else_mask)) exec_block(s.else_body, else_mask);
        break;
      }
      case ir::StmtKind::For: exec_for(s, mask); break;
      case ir::StmtKind::Barrier:
        require_whole_group(mask, "barrier");
        ++epoch_;
        break;
      case ir::StmtKind::Shuffle: {
        require_whole_group(mask, "shuffle");
        const std::size_t width = s.lanes;
        if (width == 0 || lanes_ % ir::kShuffleGroupMultiple != 0) {
          fail("shuffle in a work-group that is not a whole number of warps", 0, "", 0, 0,
               "work-groups of " + std::to_string(lanes_) + " threads: launch work-groups of a multiple of " +
                   std::to_string(ir::kShuffleGroupMultiple) + " threads");
        }
        const std::uint64_t* v = eval(s.a, mask);
        const std::uint64_t* src = eval(s.b, mask);
        auto& out = vars_[s.var];
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (src[l] >= width) {
            fail("shuffle source lane out of range", l, "", 0, 0,
                 "lane " + std::to_string(src[l]) + " of a sub-group of " + std::to_string(width) + " threads");
          }
          out[l] = v[l / width * width + src[l]];
        }
        break;
      }
      case ir::StmtKind::Mma: exec_mma(s, mask); break;
      case ir::StmtKind::LoadMatrix: exec_load_matrix(s, mask); break;
      case ir::StmtKind::CopyAsync: exec_copy_async(s, mask); break;
      case ir::StmtKind::AsyncCommit:
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          committed_copies_[l].push_back(std::move(open_copies_[l]));  // an empty group counts too (PTX)
          open_copies_[l].clear();
        }
        break;
      case ir::StmtKind::AsyncWait: exec_async_wait(s, mask); break;
      case ir::StmtKind::SharedAlloc: {
        const auto& sh = k_.shared[s.shared];
        shared_data_[s.shared] = poison_bytes(sh.type, sh.count);
        shared_written_[s.shared].assign(sh.count, 0);
        shared_race_[s.shared].reset(sh.count);
        shared_mem_[s.shared] =
            Memory{shared_data_[s.shared].data(), shared_written_[s.shared].data(), sh.count, sh.type,
                   "shared:" + sh.hint,           &shared_race_[s.shared]};
        break;
      }
      case ir::StmtKind::Atomic: {
        Memory& m = mem(s.mem);
        const std::uint64_t* idx = eval(s.a, mask);
        const std::uint64_t* v = eval(s.b, mask);
        const DType it = k_.exprs[s.a].type;
        const ir::Op op =
            s.atomic == ir::AtomicOp::Add ? ir::Op::Add : (s.atomic == ir::AtomicOp::Min ? ir::Op::Min : ir::Op::Max);
        std::string err;
        for (std::size_t l = 0; l < lanes_; ++l) {
          if (!mask[l]) continue;
          const std::size_t i = checked_index(m, it, idx[l], l, "atomic");
          if (opt_.check_uninitialized_reads && !m.written[i]) {
            fail("atomic on an element never written (poisoned)", l, "", 0, 0,
                 "buffer '" + m.name + "' element " + std::to_string(i));
          }
          const std::uint64_t old = read_elem(m, i);
          const auto r = ir::eval_op(op, m.type, m.type, old, v[l], 0, &err);
          if (!r) fail(err, l);
          write_elem(m, i, *r);
          if (s.has_var) vars_[s.var][l] = old;
        }
        break;
      }
    }
  }

  void exec_for(const ir::Stmt& s, const Mask& mask) {
    const DType t = k_.vars[s.var].type;
    auto& var = vars_[s.var];
    {
      const std::uint64_t* begin = eval(s.a, mask);
      for (std::size_t l = 0; l < lanes_; ++l) {
        if (mask[l]) var[l] = begin[l];
      }
    }
    Mask live = mask;
    std::string err;
    for (;;) {
      stmt_ = &s;
      ++now_;
      const std::uint64_t* end = eval(s.b, live);
      Mask body(lanes_, 0);
      for (std::size_t l = 0; l < lanes_; ++l) {
        if (!live[l]) continue;
        const auto lt = ir::eval_op(ir::Op::Lt, DType::boolean, t, var[l], end[l], 0, &err);
        if (!lt) fail(err, l);
        if (*lt & 1u) {
          body[l] = 1;
        } else {
          live[l] = 0;
        }
      }
      if (!any(body)) break;
      exec_block(s.body, body);
      stmt_ = &s;
      ++now_;
      const std::uint64_t* step = eval(s.c, body);
      for (std::size_t l = 0; l < lanes_; ++l) {
        if (!body[l]) continue;
        if (ir::int_of_bits(t, step[l]) <= 0) fail("loop step is not positive", l);
        const auto next = ir::eval_op(ir::Op::Add, t, t, var[l], step[l], 0, &err);
        const auto wrapped = ir::eval_op(ir::Op::Lt, DType::boolean, t, *next, var[l], 0, &err);
        if (*wrapped & 1u) fail("loop variable overflowed its type", l);
        var[l] = *next;
      }
    }
  }

  const ir::Kernel& k_;
  const LaunchGeometry& g_;
  const InterpOptions& opt_;
  std::size_t lanes_ = 0;
  std::vector<Memory> globals_;
  std::vector<std::uint64_t> scalars_;
  std::vector<std::vector<std::uint64_t>> vars_;
  std::vector<std::vector<std::uint64_t>> vals_;
  std::vector<std::uint64_t> stamp_;
  std::vector<const std::uint64_t*> vec_values_;  // StoreVec: the evaluated values of its elements
  std::uint64_t now_ = 0;
  std::uint64_t group_stamp_ = 0;
  std::vector<std::vector<std::uint8_t>> shared_data_;
  std::vector<std::vector<std::uint8_t>> shared_written_;
  std::vector<Memory> shared_mem_;
  std::vector<SharedAccesses> shared_race_;
  std::vector<std::vector<std::uint64_t>> global_writers_;              // Memory::writer of each global buffer
  std::uint32_t epoch_ = 1;                                             // barrier intervals of the work-group so far
  std::vector<std::vector<PendingCopy>> open_copies_;                   // per lane: since the last commit
  std::vector<std::deque<std::vector<PendingCopy>>> committed_copies_;  // per lane: oldest group first
  std::vector<std::array<std::uint32_t, 3>> local_;
  std::array<std::uint32_t, 3> group_{};
  const ir::Stmt* stmt_ = nullptr;
};

}  // namespace

BufferPtr Interpreter::allocate(DType t, std::size_t count) { return std::make_shared<InterpBuffer>(t, count); }

void Interpreter::upload(DeviceBuffer& dst, const void* src, std::size_t bytes) {
  auto& b = as_interp(dst);
  if (bytes != b.bytes()) {
    throw ArgumentError("upload of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(b.bytes()) +
                        " bytes (" + std::to_string(b.count()) + " x " + std::string(dtype_name(b.dtype())) + ")");
  }
  std::memcpy(b.data.data(), src, bytes);
  std::fill(b.written.begin(), b.written.end(), 1);
}

void Interpreter::download(const DeviceBuffer& src, void* dst, std::size_t bytes) {
  auto& b = as_interp(const_cast<DeviceBuffer&>(src));
  if (bytes != b.bytes()) {
    throw ArgumentError("download of " + std::to_string(bytes) + " bytes from a buffer of " +
                        std::to_string(b.bytes()) + " bytes");
  }
  std::memcpy(dst, b.data.data(), bytes);
}

void Interpreter::launch(const ir::Kernel& k, const LaunchGeometry& g, const std::vector<Arg>& args) {
  check_args(k, args);
  for (const auto& a : args) {
    if (const auto* b = std::get_if<BufferPtr>(&a)) as_interp(**b);
  }
  try {
    validate_geometry(g, options_.max_group_threads);
  } catch (const std::invalid_argument& e) {
    throw ArgumentError("kernel '" + k.name + "': " + e.what());
  }
  check_launch_bounds(k, g);
  const std::uint64_t total = g.total_groups();
  if (options_.first_group >= total) {
    throw ArgumentError("kernel '" + k.name + "': InterpOptions::first_group " + std::to_string(options_.first_group) +
                        " is past the launch's " + std::to_string(total) + " work-groups");
  }
  const std::uint64_t left = total - options_.first_group;
  const std::uint64_t end = options_.first_group + (options_.group_count ? std::min(options_.group_count, left) : left);
  GroupRunner runner(k, g, args, options_);
  const std::uint64_t gx = g.groups[0], gy = g.groups[1];
  for (std::uint64_t id = options_.first_group; id < end; ++id) {
    runner.run_group({static_cast<std::uint32_t>(id % gx), static_cast<std::uint32_t>(id / gx % gy),
                      static_cast<std::uint32_t>(id / gx / gy)});
  }
}

}  // namespace ingot::runtime
