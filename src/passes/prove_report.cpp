// The proof pass's report text (see prove.hpp): apart from the solver, so that a build without Z3 still names
// obligations and issues.
#include <string>

#include "ingot/passes/prove.hpp"

namespace ingot::passes {

std::string obligation_name(ObligationKind k) {
  switch (k) {
    case ObligationKind::InRange: return "in range";
    case ObligationKind::Aligned: return "aligned";
    case ObligationKind::NoWrap: return "no wrap-around";
    case ObligationKind::Launchable: return "launchable";
  }
  return "?";
}

std::string describe(const ProofIssue& issue) {
  std::string s = std::string(issue.status == ProofStatus::Refuted ? "refuted" : "unknown") + " (" +
                  obligation_name(issue.kind) + ") at #" + std::to_string(issue.loc) + " `" + issue.stmt + "`";
  if (!issue.buffer.empty()) s += " buffer '" + issue.buffer + "'";
  s += ": " + issue.expr + ": " + issue.detail;
  if (issue.witness && issue.kind != ObligationKind::NoWrap) {
    s += "; index " + std::to_string(issue.witness->index) + ", extent " + std::to_string(issue.witness->extent);
  } else if (issue.witness) {
    s += "; wrapped value " + std::to_string(issue.witness->index);
  }
  return s;
}

}  // namespace ingot::passes
