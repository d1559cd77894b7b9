#include "window/agreement.hpp"

#include "window/records.hpp"

namespace onesided::detail {

std::vector<std::string> agree(Bootstrap& group, const std::optional<Error>& local, const std::string& settings,
                               const std::string& extra) {
  Record mine;
  mine.put(static_cast<std::int32_t>(local ? static_cast<int>(local->category()) : -1));
  mine.str(local ? local->what() : "").str(settings).str(extra);
  const auto all = group.allgather(mine.bytes);
  struct Verdict {
    std::int32_t category;
    std::string message, settings;
  };
  std::vector<Verdict> verdicts;
  std::vector<std::string> extras;
  for (const auto& record : all) {
    RecordReader rd{record};
    Verdict v{rd.get<std::int32_t>(), rd.str(), rd.str()};
    verdicts.push_back(std::move(v));
    extras.push_back(rd.str());
  }
  // Every rank decides from the same records, so every rank raises alike.
  int nfailed = 0;
  const Verdict* first = nullptr;
  std::size_t first_rank = 0;
  for (std::size_t r = 0; r < verdicts.size(); ++r)
    if (verdicts[r].category >= 0 && nfailed++ == 0) {
      first = &verdicts[r];
      first_rank = r;
    }
  if (first)
    raise(static_cast<ErrorCategory>(first->category),
          "window creation failed on rank " + std::to_string(first_rank) +
              (nfailed > 1 ? " (and " + std::to_string(nfailed - 1) + " other rank(s))" : "") + ": " + first->message);
  for (std::size_t r = 1; r < verdicts.size(); ++r)
    if (verdicts[r].settings != verdicts[0].settings)
      raise(ErrorCategory::Argument, "window creation: arguments that must be equal on every rank differ: rank 0 has " +
                                         verdicts[0].settings + ", rank " + std::to_string(r) + " has " +
                                         verdicts[r].settings);
  return extras;
}

}  // namespace onesided::detail
