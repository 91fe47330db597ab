// The implementation commands of `npuperf` (docs/comparisons.md
// "Implementations", docs/reports.md "Release report"):
//
//   compare-impl BASE CAND [--pair CAND_OP=BASE_OP ...] [--pair-map FILE]
//                [--format text|json|markdown|html|junit] [--fail-on ...]
//     CompareImplementations: two implementations of the same operators
//     (e.g. Ascend C in BASE, PyPTO in CAND), paired by operator and case;
//     exit codes of compare (compare_commands.h): 3 a case's Task Duration
//     is significantly slower in CAND, 4 no verdict (too few repeats, not
//     comparable, errored), 0 otherwise; 1 errors, 2 usage, 5 unavailable,
//     6 not found.
//   release-report COLLECTION... [--groups FILE] [--baseline COLLECTION
//                  (--pair-map FILE | --pair ...)] [--format markdown|html|json]
//     Per model group the operators and their pass rate (GetCollection,
//     ListRounds), and with a baseline each collection's implementation
//     table (CompareImplementations). Exit 0 when the report is printed.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "client/cli.h"
#include "client/compare_commands.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npuperf::client {

// The largest pair map or groups file read (the server takes pair maps of
// up to 256 KiB).
inline constexpr size_t kMaxImplFileBytes = 1 << 20;

struct CompareImplArgs {
  std::string base;                // positional: the base collection (e.g. Ascend C)
  std::string candidate;           // positional: the candidate collection (e.g. PyPTO)
  std::vector<std::string> pairs;  // --pair CAND_OP=BASE_OP
  std::string pair_map;            // --pair-map FILE
  VerdictArgs verdict;             // --alpha, --threshold, --format, --fail-on
};
int RunCompareImpl(Session& s, const CompareImplArgs& args, std::ostream& out, std::ostream& err);

enum class ReleaseFormat { kDefault, kMarkdown, kHtml, kJson };

struct ReleaseReportArgs {
  std::vector<std::string> collections;            // positional, one or more
  std::string groups;                              // --groups FILE: OPERATOR=GROUP lines
  std::string baseline;                            // --baseline COLLECTION
  std::vector<std::string> pairs;                  // --pair CAND_OP=BASE_OP
  std::string pair_map;                            // --pair-map FILE
  ReleaseFormat format = ReleaseFormat::kDefault;  // markdown unless --format json
};
int RunReleaseReport(Session& s, const ReleaseReportArgs& args, std::ostream& out,
                     std::ostream& err);

// Registers compare-impl and release-report; `chosen` as in cli.h.
void AddImplementationCommands(CLI::App& app, ServerCommand& chosen);

}  // namespace npuperf::client
