#include "task/expr.h"

#include <cctype>
#include <cmath>
#include <vector>

namespace kevo {
namespace {

// Recursive-descent parser evaluating as it goes; with `dims == nullptr` it only collects names.
class Parser {
 public:
  Parser(std::string_view s, const DimValues* dims, std::set<std::string>* names)
      : s_(s), dims_(dims), names_(names) {}

  Result<double> parse() {
    auto v = expr();
    if (!v) return v;
    skip();
    if (pos_ != s_.size()) return err("unexpected '{}'", s_.substr(pos_, 1));
    return v;
  }

 private:
  template <class... A>
  Unexpected err(fmt::format_string<A...> f, A&&... a) {
    return fail("in expression \"{}\" at column {}: {}", s_, pos_ + 1,
                fmt::format(f, std::forward<A>(a)...));
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<double> expr() {
    auto l = term();
    if (!l) return l;
    double v = *l;
    for (;;) {
      if (eat('+')) {
        auto r = term();
        if (!r) return r;
        v += *r;
      } else if (eat('-')) {
        auto r = term();
        if (!r) return r;
        v -= *r;
      } else {
        return v;
      }
    }
  }

  Result<double> term() {
    auto l = unary();
    if (!l) return l;
    double v = *l;
    for (;;) {
      if (eat('*')) {
        auto r = unary();
        if (!r) return r;
        v *= *r;
      } else if (eat('/')) {
        size_t at = pos_;
        auto r = unary();
        if (!r) return r;
        if (*r == 0 && dims_) {
          pos_ = at;
          return err("division by zero");
        }
        v = dims_ ? v / *r : 0;
      } else if (eat('%')) {
        size_t at = pos_;
        auto r = unary();
        if (!r) return r;
        if (*r == 0 && dims_) {
          pos_ = at;
          return err("modulo by zero");
        }
        v = dims_ ? std::fmod(v, *r) : 0;
      } else {
        return v;
      }
    }
  }

  Result<double> unary() {
    // Nesting ("((((...", "----...") is bounded so a hostile expression cannot exhaust the stack.
    constexpr int kMaxDepth = 64;
    if (++depth_ > kMaxDepth) return err("nested more than {} levels deep", kMaxDepth);
    auto v = unary_body();
    --depth_;
    return v;
  }

  Result<double> unary_body() {
    if (eat('-')) {
      auto v = unary();
      if (!v) return v;
      return -*v;
    }
    if (eat('+')) return unary();
    return primary();
  }

  Result<double> primary() {
    skip();
    if (pos_ >= s_.size()) return err("expression ends too early");
    char c = s_[pos_];
    if (eat('(')) {
      auto v = expr();
      if (!v) return v;
      if (!eat(')')) return err("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
              s_[pos_] == 'e' || s_[pos_] == 'E' ||
              ((s_[pos_] == '-' || s_[pos_] == '+') && pos_ > start &&
               (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
        ++pos_;
      std::string num(s_.substr(start, pos_ - start));
      char* end = nullptr;
      double v = std::strtod(num.c_str(), &end);
      if (!end || *end) {
        pos_ = start;
        return err("bad number '{}'", num);
      }
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      if (eat('(')) return call(name, start);
      if (names_) names_->insert(name);
      if (!dims_) return 1.0;
      auto it = dims_->find(name);
      if (it == dims_->end()) {
        pos_ = start;
        return err("unknown dimension '{}'", name);
      }
      return static_cast<double>(it->second);
    }
    return err("unexpected '{}'", std::string(1, c));
  }

  Result<double> call(const std::string& name, size_t start) {
    std::vector<double> args;
    if (!eat(')')) {
      for (;;) {
        auto v = expr();
        if (!v) return v;
        args.push_back(*v);
        if (eat(')')) break;
        if (!eat(',')) return err("expected ',' or ')' in call to {}", name);
      }
    }
    auto need = [&](size_t n) -> Status {
      if (args.size() != n) {
        pos_ = start;
        return err("{} takes {} arguments, got {}", name, n, args.size());
      }
      return {};
    };
    if (name == "min" || name == "max" || name == "ceil_div") {
      KEVO_TRY(need(2));
      if (!dims_) return 1.0;
      if (name == "min") return std::min(args[0], args[1]);
      if (name == "max") return std::max(args[0], args[1]);
      if (args[1] == 0) return err("ceil_div by zero");
      return std::ceil(args[0] / args[1]);
    }
    pos_ = start;
    return err("unknown function '{}' (known: min, max, ceil_div)", name);
  }

  std::string_view s_;
  const DimValues* dims_;
  std::set<std::string>* names_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<double> eval_expr(std::string_view text, const DimValues& dims) {
  return Parser(text, &dims, nullptr).parse();
}

Result<int64_t> eval_int_expr(std::string_view text, const DimValues& dims) {
  auto v = eval_expr(text, dims);
  if (!v) return v.unexpected();
  // Past 2^53 a double no longer holds every integer, and past 2^63 an int64 holds none: either
  // is an overflow of the expression, said as such (not as a wrapped, negative size).
  constexpr double kMaxExact = 9007199254740992.0;  // 2^53
  if (std::isinf(*v) || (std::isfinite(*v) && std::fabs(*v) > kMaxExact))
    return fail("expression \"{}\" overflows here: {:.4g} is beyond 2^53", text, *v);
  if (!std::isfinite(*v) || std::nearbyint(*v) != *v)
    return fail("expression \"{}\" is {} here, not a whole number", text, *v);
  return static_cast<int64_t>(*v);
}

Result<std::set<std::string>> expr_names(std::string_view text) {
  std::set<std::string> names;
  auto v = Parser(text, nullptr, &names).parse();
  if (!v) return v.unexpected();
  return names;
}

}  // namespace kevo
