// The decision rule for native vs software atomics, and the info-key grammars
// it consumes: pure logic, tested without a provider.
#include <gtest/gtest.h>

#include "atomics/atomic_plan.hpp"
#include "onesided/error.hpp"
#include "atomics/op_set.hpp"
#include "order/ordering.hpp"

using namespace onesided;
using namespace onesided::detail;

namespace {

NativeTable everything_native() {
  NativeTable t;
  for (auto k : {AtomicKind::Fetch, AtomicKind::Compare})
    for (const auto& o : kOps)
      for (const auto& d : kDtypes) t.set(k, o.id, d.id, 1);
  return t;
}


}  // namespace

TEST(OpSet, ParsesItemsAndPrintsCanonically) {
  auto s = OpSet::parse(" fetch_and_op:sum , compare_and_swap,rmw:swap ");
  EXPECT_TRUE(s.contains(Function::FetchAndOp, Op::Sum));
  EXPECT_FALSE(s.contains(Function::GetAccumulate, Op::Sum));
  EXPECT_TRUE(s.contains(Function::CompareAndSwap, Op::CswapEq));
  EXPECT_TRUE(s.contains(Function::Rmw, Op::Replace));
  EXPECT_EQ(s.str(), "fetch_and_op:sum,compare_and_swap,rmw:replace");
  EXPECT_EQ(OpSet::parse("same_op_no_op"), OpSet::all());
  EXPECT_EQ(OpSet::parse("").str(), "all");
  EXPECT_EQ(OpSet::parse("rmw2").str(), "rmw2");
}

TEST(OpSet, RejectsWhatItCannotMean) {
  for (const char* bad : {"fetch_op:sum", "fetch_and_op:nope", "accumulate:no_op", "rmw2:sum", "accumulate:inc"})
    EXPECT_THROW(OpSet::parse(bad), Error) << bad;
}

// MPICH's which_accumulate_ops: op names for every call, cswap, none,
// any_op; what MPICH does not know is ignored, never an error.
TEST(OpSet, ReadsMpichsGrammarAndNeverFails) {
  auto s = OpSet::parse_mpich("sum,no_op");
  for (auto f : {Function::Accumulate, Function::GetAccumulate, Function::FetchAndOp, Function::Rmw})
    EXPECT_TRUE(s.contains(f, Op::Sum)) << function_name(f);
  EXPECT_TRUE(s.contains(Function::GetAccumulate, Op::NoOp));
  EXPECT_TRUE(s.contains(Function::FetchAndOp, Op::NoOp));
  EXPECT_FALSE(s.contains(Function::Accumulate, Op::Max));
  EXPECT_FALSE(s.contains(Function::CompareAndSwap, Op::CswapEq));
  EXPECT_EQ(s.str(), "accumulate:sum,get_accumulate:sum,get_accumulate:no_op,fetch_and_op:sum,fetch_and_op:no_op,"
                     "rmw:sum");
  EXPECT_TRUE(OpSet::parse_mpich("cswap").contains(Function::CompareAndSwap, Op::CswapEq));
  EXPECT_TRUE(OpSet::parse_mpich("maxloc,minloc").contains(Function::Accumulate, Op::MinLoc));
  EXPECT_EQ(OpSet::parse_mpich("any_op"), OpSet::all());
  EXPECT_EQ(OpSet::parse_mpich("none").str(), "none");
  EXPECT_EQ(OpSet::parse("none"), OpSet::parse_mpich("none"));
  EXPECT_EQ(OpSet::parse_mpich("bogus,sum"), OpSet::parse_mpich("sum"));  // unknown items ignored
  EXPECT_EQ(OpSet::parse_mpich("bogus"), OpSet::all());                  // nothing known: the default
  EXPECT_EQ(OpSet::parse_mpich("rmw:swap").str(), "rmw:replace");        // onesided's items too
  EXPECT_EQ((OpSet::parse("fetch_and_op") & OpSet::parse_mpich("sum")).str(), "fetch_and_op:sum");
}

TEST(Ordering, ParsesSubsetsInAnyOrderAndNone) {
  EXPECT_EQ(Ordering::parse("waw, rar").str(), "rar,waw");
  EXPECT_EQ(Ordering::parse("none").str(), "none");
  EXPECT_EQ(Ordering{}.str(), "rar,raw,war,waw");
  EXPECT_THROW(Ordering::parse("rar,wow"), Error);
  EXPECT_THROW(Ordering::parse(""), Error);
}

TEST(AtomicPlan, OneMissingDeclaredOpSendsTheWholeDtypeToSoftware) {
  NativeTable t = everything_native();
  t.set(AtomicKind::Fetch, Op::Max, Dtype::Float64, 0);
  AtomicPlan all(OpSet::all(), t, t, "prov", "");
  EXPECT_TRUE(all.path(Dtype::Int64).native);
  EXPECT_FALSE(all.path(Dtype::Float64).native);
  EXPECT_NE(all.path(Dtype::Float64).reason.find(":max for float64"), std::string::npos)
      << all.path(Dtype::Float64).reason;
  // Declaring only what the program uses brings float64 back to native.
  AtomicPlan sum(OpSet::parse("fetch_and_op:sum"), t, t, "prov", "");
  EXPECT_TRUE(sum.path(Dtype::Float64).native);
  // ... and dtypes no declared op applies to are reported as such.
  EXPECT_FALSE(sum.path(Dtype::Bool).native);
  EXPECT_NE(sum.path(Dtype::Bool).reason.find("no declared op"), std::string::npos);
}

TEST(AtomicPlan, EveryRankMustHaveIt) {
  NativeTable local = everything_native(), everywhere = local;
  everywhere.set(AtomicKind::Compare, Op::CswapEq, Dtype::Int32, 0);
  AtomicPlan p(OpSet::all(), local, everywhere, "prov", "");
  EXPECT_FALSE(p.path(Dtype::Int32).native);
  EXPECT_NE(p.path(Dtype::Int32).reason.find("at every rank"), std::string::npos);
  EXPECT_TRUE(p.path(Dtype::Int64).native);
}

TEST(AtomicPlan, MissingAtomicOrderKeepsTheDtypeNative) {
  // Orders the provider lacks are kept by waiting (OrderRule), not by
  // sending the dtype to software.
  const NativeTable t = everything_native();
  AtomicPlan strict(OpSet::all(), t, t, "prov", "");
  EXPECT_TRUE(strict.path(Dtype::Int64).native);
}

TEST(AtomicPlan, IncRunsAsNativeSumAndUnavailableProvidersGoSoftware) {
  NativeTable t = everything_native();
  t.set(AtomicKind::Fetch, Op::Inc, Dtype::Int64, 0);  // never probed: INC is SUM with ones
  AtomicPlan p(OpSet::parse("rmw:inc"), t, t, "prov", "");
  EXPECT_TRUE(p.path(Dtype::Int64).native);
  AtomicPlan off(OpSet::all(), t, t, "prov", "no atomics here");
  EXPECT_FALSE(off.path(Dtype::Int64).native);
  EXPECT_EQ(off.path(Dtype::Int64).reason, "no atomics here");
}

TEST(AtomicPlan, TheKeptPlanServesOnlyTheSameInputs) {
  // A plan is kept for the next window with the same inputs: each input
  // that differs must give that window its own decision, in any order.
  NativeTable t = everything_native(), other = t;
  other.set(AtomicKind::Fetch, Op::Sum, Dtype::Int64, 0);
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(AtomicPlan(OpSet::all(), t, t, "prov", "").path(Dtype::Int64).native);
    EXPECT_FALSE(AtomicPlan(OpSet::all(), t, other, "prov", "").path(Dtype::Int64).native);
    EXPECT_NE(AtomicPlan(OpSet::all(), other, other, "prov", "").path(Dtype::Int64).reason.find("at every rank"),
              AtomicPlan(OpSet::all(), t, other, "prov", "").path(Dtype::Int64).reason.find("at every rank"));
    EXPECT_TRUE(AtomicPlan(OpSet::parse("fetch_and_op:max"), t, other, "prov", "").path(Dtype::Int64).native);
    EXPECT_NE(AtomicPlan(OpSet::all(), t, other, "other", "").path(Dtype::Int64).reason.find("provider other"),
              std::string::npos);
    EXPECT_EQ(AtomicPlan(OpSet::all(), t, t, "prov", "off").path(Dtype::Int64).reason, "off");
  }
}
