// attnc/generator.h: creates the Halide generator that lowers and schedules one spec.
#pragma once

#include <Halide.h>

namespace attnc {

// Its one GeneratorParam is "spec", the spec's text form.
Halide::Internal::AbstractGeneratorPtr create_attention_generator(const Halide::GeneratorContext &context);

}  // namespace attnc
