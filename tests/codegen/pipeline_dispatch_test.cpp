// pipeline_family(): each generator invocation goes to the one builder its form, role, core path
// and target call for, and build_pipeline refuses probs where no family has its shape.
#include "attnc/pipeline_dispatch.h"

#include <doctest/doctest.h>

#include <string>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/tile_config.h"

namespace {

using attnc::PipelineFamily;

attnc::PipelineContext context_of(const std::string &text, const std::string &core_path = "tiles",
                                  const std::string &role = "attend", bool gpu = false) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE_MESSAGE(parsed.ok, parsed.message);
  attnc::PipelineContext ctx;
  ctx.spec = attn::resolve(parsed.spec);
  ctx.core_path = core_path;
  ctx.role = role;
  ctx.gpu = gpu;
  return ctx;
}

}  // namespace

TEST_CASE("the core form's path and target choose its core family") {
  const std::string core = "heads=2 head_dim=32 mask=causal";
  REQUIRE(attnc::whole_row_core(context_of(core).spec));
  CHECK(attnc::pipeline_family(context_of(core)) == PipelineFamily::whole_row_core);
  CHECK(attnc::pipeline_family(context_of(core, "packed")) == PipelineFamily::whole_row_core);
  CHECK(attnc::pipeline_family(context_of(core, "blocks")) == PipelineFamily::block_core);
  CHECK(attnc::pipeline_family(context_of(core, "split_keys")) == PipelineFamily::split_keys);
  // GPUs run the block core for every prefill path, the split-keys core for decode.
  CHECK(attnc::pipeline_family(context_of(core, "tiles", "attend", true)) == PipelineFamily::block_core);
  CHECK(attnc::pipeline_family(context_of(core, "split_keys", "attend", true)) == PipelineFamily::split_keys);
}

TEST_CASE("the block form and a cache's append role have builders of their own") {
  CHECK(attnc::pipeline_family(context_of("d_model=48 heads=3 form=block mask=causal")) ==
        PipelineFamily::block_form);
  CHECK(attnc::pipeline_family(context_of("d_model=48 heads=3 form=block", "tiles", "attend", true)) ==
        PipelineFamily::block_form);
  const std::string cache = "heads=2 head_dim=16 mask=causal kv_cache=paged(8)";
  CHECK(attnc::pipeline_family(context_of(cache, "tiles", "append")) == PipelineFamily::cache_append);
  CHECK(attnc::pipeline_family(context_of(cache, "split_keys", "paged")) == PipelineFamily::split_keys);
  CHECK(attnc::to_string(PipelineFamily::cache_append) == "cache_append");
  CHECK(attnc::to_string(PipelineFamily::block_form) == "block_form");
}

TEST_CASE("probs with head groups or a cache is refused before any Func is defined") {
  // check_spec refuses these specs; resolve() does not, so the builder's own guard is what runs.
  attnc::PipelineContext grouped = context_of("d_model=640 head_groups=2x128+4x64 form=block mask=causal");
  grouped.spec.probs = true;
  CHECK_THROWS_AS(attnc::build_pipeline(grouped), Halide::CompileError);
  attnc::PipelineContext cached = context_of("heads=2 head_dim=16 mask=causal kv_cache=contiguous");
  cached.spec.probs = true;
  CHECK_THROWS_AS(attnc::build_pipeline(cached), Halide::CompileError);
}
