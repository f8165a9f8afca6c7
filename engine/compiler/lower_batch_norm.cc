// batch-norm-training, batch-norm-inference and batch-norm-grad, which
// PyTorch/XLA emits for every BatchNorm and LayerNorm (and TF before XLA's
// expander runs). Each is written out as the reductions, broadcasts and
// elementwise ops that compute it, an HLO computation of its own, and lowered
// like a call: the reductions are then planned over the operand's tiles and
// the elementwise ops fused where their operands live, as any others are.
// As one opaque op, each tile holding a piece of the small results read a
// share of the whole operand: mobilenet_v2's batch-norm-grad received 309 MB
// onto one tile.
//
// The arithmetic is XLA's operation semantics (operation_semantics.md), in
// the operand's element type as XLA's own expander computes it, but for
// halves, which compute in f32 (see Expansion). The variance is the mean of
// squared deviations from the mean (two passes), the definition, rather
// than E[x^2] - E[x]^2, which cancels.
//   training:  mean = sum(x) / N, var = sum((x - mean)^2) / N,
//              y = (x - mean) * (scale * rsqrt(var + eps)) + offset;
//              result (y, mean, var)
//   inference: y = x * g + (offset - mean * g), g = scale * rsqrt(var + eps)
//   grad:      grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) * rsqrt(var + eps),
//              grad_x = scale * rsqrt(var + eps) / N
//                       * (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) / (var + eps))
// N is the number of elements of one feature; the sums run over every
// dimension but feature_index.
#include <fmt/format.h>

#include <charconv>
#include <utility>

#include "engine/compiler/expansion_text.h"
#include "engine/compiler/lower.h"

namespace tileprof::engine::compiler {
namespace {

bool IsFloat(hlo::PrimitiveType type) {
  return type == hlo::PrimitiveType::kF16 || type == hlo::PrimitiveType::kBF16 ||
         type == hlo::PrimitiveType::kF32 || type == hlo::PrimitiveType::kF64;
}

// The text of one expansion: a scalar add for the reductions, then the entry
// whose instructions are named after the batch norm's (`name.mean`, ...).
// f16 and bf16 batch norms compute in f32 (each operand converted, each
// result rounded back), as TensorFlow's and Flax's batch norms on halves do:
// the element count alone, 401,408 for a [96,32,112,112] activation, is
// infinite in f16, and a sum of that many halves in half is noise.
class Expansion {
 public:
  Expansion(std::string_view name, const hlo::Shape& operand, int64_t feature,
            std::string_view epsilon)
      : text_(name), feature_(feature), epsilon_(epsilon) {
    const hlo::PrimitiveType in = operand.element_type;
    const hlo::PrimitiveType computing = ComputingType(in);
    converts_ = computing != in;
    type_ = hlo::PrimitiveTypeName(computing);
    hlo::Shape features = operand;
    features.dimensions = {operand.dimensions[static_cast<size_t>(feature)]};
    full_ = ShapeText(operand, computing);
    in_full_ = ShapeText(operand);
    feature_shape_ = ShapeText(features, computing);
    in_feature_ = ShapeText(features);
    std::string dims;
    uint64_t count = 1;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (d == feature) continue;
      dims += fmt::format("{}{}", dims.empty() ? "" : ",", d);
      count *= static_cast<uint64_t>(operand.dimensions[static_cast<size_t>(d)]);
    }
    reduced_ = "{" + dims + "}";
    count_ = count;
    add_ = text_.ScalarComputation("add", "add", type_);
  }

  // The operand's and the feature vectors' shapes in the operand's type.
  const std::string& in_full() const { return in_full_; }
  const std::string& in_feature() const { return in_feature_; }
  bool converts() const { return converts_; }

  std::string Ref(std::string_view what) const { return text_.Ref(what); }
  // The parameters, in order, each a full-size operand or a feature vector:
  // `what` is its value in the computing type.
  void Parameters(std::initializer_list<std::pair<std::string_view, bool>> params) {
    for (const auto& [what, full] : params) {
      const std::string& shape = full ? in_full_ : in_feature_;
      const std::string name = converts() ? fmt::format("{}_in", what) : std::string(what);
      text_.Parameter(name, shape);
      if (converts()) text_.Add(what, full ? full_ : feature_shape_, Op("convert", Ref(name)));
    }
  }
  // The reference to result `what`, in the operand's type.
  std::string Out(std::string_view what, bool full) {
    if (!converts()) return Ref(what);
    return text_.Add(fmt::format("{}_out", what), full ? in_full_ : in_feature_,
                     Op("convert", Ref(what)));
  }
  // rsqrt(variance + epsilon), from the instruction named `variance`.
  void InverseDeviation() {
    Binary("variance_eps", false, "add", "variance", "epsilon_f");
    text_.Add("rsqrt", feature_shape_, Op("rsqrt", Ref("variance_eps")));
  }
  // Scalars N, eps and 0, and N and eps broadcast to the feature shape.
  void Constants() {
    const std::string scalar = fmt::format("{}[]", type_);
    text_.Add("zero", scalar, "constant(0)");
    text_.Add("count", scalar, fmt::format("constant({})", count_));
    text_.Add("epsilon", scalar, fmt::format("constant({})", epsilon_));
    text_.Add("count_f", feature_shape_, Op("broadcast", Ref("count"), "dimensions={}"));
    text_.Add("epsilon_f", feature_shape_, Op("broadcast", Ref("epsilon"), "dimensions={}"));
  }
  // sum over every dimension but the feature.
  void Sum(std::string_view what, std::string_view of) {
    text_.Add(what, feature_shape_,
              Op("reduce", fmt::format("{}, {}", Ref(of), Ref("zero")),
                 fmt::format("dimensions={}, to_apply={}", reduced_, add_)));
  }
  // A feature vector broadcast along the feature dimension.
  void Spread(std::string_view what, std::string_view of) {
    text_.Add(what, full_, Op("broadcast", Ref(of), fmt::format("dimensions={{{}}}", feature_)));
  }
  void Binary(std::string_view what, bool full, std::string_view op, std::string_view a,
              std::string_view b) {
    text_.Add(what, full ? full_ : feature_shape_, Op(op, fmt::format("{}, {}", Ref(a), Ref(b))));
  }
  std::string Text(std::string_view result, std::string_view root) const {
    return text_.Finish(result, root);
  }

 private:
  // "op(args), rest".
  static std::string Op(std::string_view op, std::string_view args, std::string_view rest = {}) {
    return fmt::format("{}({}){}{}", op, args, rest.empty() ? "" : ", ", rest);
  }

  ExpansionText text_;
  int64_t feature_;
  std::string epsilon_;
  bool converts_ = false;
  std::string_view type_;
  std::string full_, feature_shape_, in_full_, in_feature_, reduced_, add_;
  uint64_t count_ = 1;
};

}  // namespace

Expected<Value> Lowering::LowerBatchNorm(const hlo::Instruction& instruction,
                                         std::span<const Value> operands,
                                         program::Sequence& program) {
  const hlo::Opcode opcode = instruction.opcode();
  const size_t expected = opcode == hlo::Opcode::kBatchNormTraining ? 3 : 5;
  if (instruction.operand_count() != expected || operands.size() != expected) {
    return MakeError("{} takes {} operands, not {}", hlo::OpcodeName(opcode), expected,
                     instruction.operand_count());
  }
  const hlo::Shape& x = instruction.operand(0)->shape();
  const hlo::Attribute* feature_attr = instruction.FindAttribute("feature_index");
  const hlo::Attribute* epsilon_attr = instruction.FindAttribute("epsilon");
  int64_t feature = -1;
  if (feature_attr != nullptr) {
    const std::string_view text = feature_attr->value();
    if (std::from_chars(text.data(), text.data() + text.size(), feature).ec != std::errc())
      feature = -1;
  }
  if (!x.IsArray() || feature < 0 || feature >= x.rank()) {
    return MakeError("feature_index={} is not a dimension of the operand {}",
                     feature_attr != nullptr ? feature_attr->value() : "(none)",
                     hlo::ShapeToString(x));
  }
  if (!IsFloat(x.element_type)) {
    // Not a batch norm XLA accepts; accounted for, as other opaque ops.
    return LowerOpaque(instruction, operands, program);
  }
  // Every other operand is a feature vector of the operand's type, but
  // batch-norm-grad's last, the output's gradient, which has its shape.
  const int64_t features = x.dimensions[static_cast<size_t>(feature)];
  for (size_t i = 1; i < expected; ++i) {
    const hlo::Shape& s = instruction.operand(i)->shape();
    const bool like_x = opcode == hlo::Opcode::kBatchNormGrad && i == 4;
    const bool ok =
        s.IsArray() && s.element_type == x.element_type &&
        (like_x ? s.dimensions == x.dimensions : s.rank() == 1 && s.dimensions[0] == features);
    if (!ok) {
      return MakeError(
          "operand {} is {}; {} expected", i, hlo::ShapeToString(s),
          like_x ? hlo::ShapeToString(x)
                 : fmt::format("{}[{}]", hlo::PrimitiveTypeName(x.element_type), features));
    }
  }
  const std::string_view epsilon = epsilon_attr != nullptr ? epsilon_attr->value() : "0";

  Expansion e(instruction.name(), x, feature, epsilon);
  const std::string& full = e.in_full();
  const std::string& vec = e.in_feature();
  std::string result, root;
  // Each full-size tensor the expansion stores is a pass over the operand
  // and its vertices: the feature vectors are combined first, so that each
  // output is one fused expression of its operands and a few broadcast
  // feature vectors. The deviation x - mean is computed again where it is
  // read rather than stored; it is kept as such (not x * a - mean * a,
  // which cancels when the mean is large against the deviation), but in
  // inference, where XLA's expander folds the mean into the shift too.
  if (opcode == hlo::Opcode::kBatchNormTraining) {
    e.Parameters({{"x", true}, {"scale", false}, {"offset", false}});
    e.Constants();
    e.Sum("sum", "x");
    e.Binary("mean", false, "divide", "sum", "count_f");
    e.Spread("mean_b", "mean");
    // The deviation twice: an op reading one value twice is not fused,
    // and it would be stored.
    e.Binary("centred", true, "subtract", "x", "mean_b");
    e.Binary("centred_twice", true, "subtract", "x", "mean_b");
    e.Binary("square", true, "multiply", "centred", "centred_twice");
    e.Sum("square_sum", "square");
    e.Binary("variance", false, "divide", "square_sum", "count_f");
    e.InverseDeviation();
    e.Binary("gain", false, "multiply", "scale", "rsqrt");
    e.Spread("gain_b", "gain");
    e.Spread("offset_b", "offset");
    e.Binary("centred_again", true, "subtract", "x", "mean_b");
    e.Binary("scaled", true, "multiply", "centred_again", "gain_b");
    e.Binary("y", true, "add", "scaled", "offset_b");
    result = fmt::format("({}, {}, {})", full, vec, vec);
    root = fmt::format("tuple({}, {}, {})", e.Out("y", true), e.Out("mean", false),
                       e.Out("variance", false));
  } else if (opcode == hlo::Opcode::kBatchNormInference) {
    e.Parameters(
        {{"x", true}, {"scale", false}, {"offset", false}, {"mean", false}, {"variance", false}});
    e.Constants();
    e.InverseDeviation();
    e.Binary("gain", false, "multiply", "scale", "rsqrt");
    e.Binary("mean_gain", false, "multiply", "mean", "gain");
    e.Binary("shift", false, "subtract", "offset", "mean_gain");
    e.Spread("gain_b", "gain");
    e.Spread("shift_b", "shift");
    e.Binary("scaled", true, "multiply", "x", "gain_b");
    result = full;
    if (e.converts()) {
      e.Binary("y", true, "add", "scaled", "shift_b");
      root = fmt::format("convert({})", e.Ref("y"));
    } else {
      root = fmt::format("add({}, {})", e.Ref("scaled"), e.Ref("shift_b"));
    }
  } else {
    e.Parameters(
        {{"x", true}, {"scale", false}, {"mean", false}, {"variance", false}, {"dy", true}});
    e.Constants();
    e.Spread("mean_b", "mean");
    e.Binary("centred", true, "subtract", "x", "mean_b");
    e.Sum("dy_sum", "dy");
    e.Binary("dy_centred", true, "multiply", "dy", "centred");
    e.Sum("dy_centred_sum", "dy_centred");
    e.InverseDeviation();
    e.Binary("grad_scale", false, "multiply", "dy_centred_sum", "rsqrt");
    // grad_x = k * (N * dy - sum(dy) - (x - mean) * c), k = scale * rsqrt / N,
    // c = sum(dy * (x - mean)) / (var + eps): dy * (k N) - (x - mean) * (k c)
    // - k sum(dy), the deviation kept as such (x * (k c) - mean * (k c)
    // would cancel when the mean is large).
    e.Binary("scale_rsqrt", false, "multiply", "scale", "rsqrt");
    e.Binary("k", false, "divide", "scale_rsqrt", "count_f");
    e.Binary("c", false, "divide", "dy_centred_sum", "variance_eps");
    e.Binary("dy_gain", false, "multiply", "k", "count_f");
    e.Binary("x_gain", false, "multiply", "k", "c");
    e.Binary("shift", false, "multiply", "k", "dy_sum");
    e.Spread("dy_gain_b", "dy_gain");
    e.Spread("x_gain_b", "x_gain");
    e.Spread("shift_b", "shift");
    e.Binary("t1", true, "multiply", "dy", "dy_gain_b");
    e.Binary("centred_again", true, "subtract", "x", "mean_b");
    e.Binary("t2", true, "multiply", "centred_again", "x_gain_b");
    e.Binary("t3", true, "subtract", "t1", "t2");
    e.Binary("grad_x", true, "subtract", "t3", "shift_b");
    result = fmt::format("({}, {}, {})", full, vec, vec);
    root = fmt::format("tuple({}, {}, {})", e.Out("grad_x", true), e.Out("grad_scale", false),
                       e.Out("dy_sum", false));
  }
  // A full-size operand in many runs a tile (a planned convolution's output
  // boxes) is copied once into a linear layout: every fused op of the
  // expansion then lies where its operands and its feature vectors' copies
  // lie, where each would otherwise have received the whole operand.
  std::vector<Value> args(operands.begin(), operands.end());
  for (size_t i = 0; i < args.size(); ++i) {
    const bool full = i == 0 || (opcode == hlo::Opcode::kBatchNormGrad && i == 4);
    if (!full || args[i].is_tuple || !args[i].tensor.valid() || !Fragmented(args[i].tensor))
      continue;
    const Tensor& source = args[i].tensor;
    TILEPROF_ASSIGN_OR_RETURN(
        Tensor linear,
        NewTensor(source.element_type(), source.shape(),
                  fmt::format("{}.{}", instruction.name(), i == 0 ? "x" : "dy"), true));
    program.Add(program::Copy(source, linear));
    args[i] = Value::Array(std::move(linear));
  }
  return LowerExpansion(instruction, e.Text(result, root), args, program);
}

}  // namespace tileprof::engine::compiler
