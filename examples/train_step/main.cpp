// main.cpp: checks the model's gradients against finite differences, then trains it on associative recall.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "adam.h"
#include "attention.h"
#include "gradient_check.h"
#include "model.h"
#include "task.h"

namespace {

constexpr uint32_t seed = 33;
constexpr int batch_size = 16;     // fresh sequences per step
constexpr int held_out_size = 64;  // sequences the loss curve is measured on, never trained on
constexpr double learning_rate = 1e-2;
constexpr int report_every = 25;
// The central differences' step. The loss sees fp32 weights and activations, so a smaller step
// measures rounding and a larger one curvature; the worst relative error of the checks below, on
// an AVX-512 machine: 8.9e-3 at 3e-3 (rounding, w_k's smallest entry), 4.5e-3 at 1e-2, 1.4e-3 at
// 3e-2, 1.0e-3 at 1e-1 (curvature, the q and k directions).
constexpr double check_epsilon = 3e-2;
constexpr int entries_per_matrix = 3;
constexpr double check_tolerance = 1e-2;
// Training must at least halve the held-out loss (chance: log(values) = 2.08).
constexpr double required_drop = 0.5;

struct Evaluation {
  double loss;
  double accuracy;
};

Evaluation evaluate(const Model &model, const Parameters &parameters, const Batch &batch, int pairs) {
  const Activations act = model.forward(parameters, batch);
  return {act.loss, double(act.correct) / (batch.count * pairs)};
}

}  // namespace

int main(int argc, char **argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 150;
  if (argc > 2 || steps < 1) return std::fprintf(stderr, "usage: train_step [steps >= 1, default 150]\n"), 2;
  const auto start = std::chrono::steady_clock::now();

  const attn::rt::Result<Attention> attention = Attention::find();
  if (!attention) {
    return std::fprintf(stderr, "train_step: %s (%s)\n", attention.status().message().c_str(),
                        attention.status().name()),
           1;
  }
  Random random(seed);
  const RecallTask task(TaskShape{}, random);
  const TaskShape &shape = task.shape();
  const Model model(*attention, shape);
  Parameters parameters = model.initial_parameters(random);
  const Batch held_out = task.sample(held_out_size, random);

  std::printf("train_step: associative recall, %d (key, value) tokens then %d queries, %d values\n",
              shape.pairs, shape.pairs, shape.values);
  std::printf("  attention: heads=%d kv_heads=%d head_dim=%d causal, d_model %d\n", heads, kv_heads, head_dim,
              shape.d_model);
  std::printf("  forward  %s\n  backward %s\n  runs     %s\n", attention->forward_id(),
              attention->backward_id(), attention->selected_target());

  std::printf("gradient check at step 0 (central differences, epsilon %g, tolerance %g):\n", check_epsilon,
              check_tolerance);
  double worst = 0;
  for (const GradientCheck &check : check_gradients(model, parameters, task.sample(batch_size, random),
                                                    random, entries_per_matrix, check_epsilon)) {
    std::printf("  %-12s analytic % .6e  numeric % .6e  relative error %.2e\n", check.what.c_str(),
                check.analytic, check.numeric, check.relative_error());
    if (!(check.relative_error() <= worst)) worst = check.relative_error();  // NaN counts as worst
  }
  const bool gradients_ok = worst <= check_tolerance;
  std::printf("  worst relative error %.2e: %s\n", worst, gradients_ok ? "ok" : "FAILED");

  std::printf("training: Adam, learning rate %g, %d sequences per step, loss on %d held-out sequences\n",
              learning_rate, batch_size, held_out_size);
  Adam adam(parameters, learning_rate);
  const Evaluation initial = evaluate(model, parameters, held_out, shape.pairs);
  Evaluation last = initial;
  for (int step = 0;; ++step) {
    if (step % report_every == 0 || step == steps) {
      last = step == 0 ? initial : evaluate(model, parameters, held_out, shape.pairs);
      std::printf("  step %4d  loss %.4f  accuracy %5.1f%%\n", step, last.loss, 100 * last.accuracy);
    }
    if (step == steps) break;
    const Batch batch = task.sample(batch_size, random);
    const Activations act = model.forward(parameters, batch);
    Gradients grads = model.backward(parameters, batch, act);
    adam.step(parameters, grads.weights);
  }
  const bool loss_ok = last.loss < required_drop * initial.loss;
  std::printf("  loss %.4f -> %.4f (%.3gx): %s (needs below %gx)\n", initial.loss, last.loss,
              last.loss / initial.loss, loss_ok ? "ok" : "FAILED", required_drop);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s in %.2f s\n", gradients_ok && loss_ok ? "passed" : "FAILED", seconds);
  return gradients_ok && loss_ok ? 0 : 1;
}
