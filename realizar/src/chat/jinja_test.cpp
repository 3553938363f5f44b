// The Jinja subset feature by feature (expected output as Jinja with transformers' settings gives it),
// the errors for unsupported or broken templates, and robustness against truncated templates.
#include <gtest/gtest.h>

#include <random>

#include "chat/builtin_templates.h"
#include "realizar/chat_template.h"

namespace realizar {
namespace {

using chat::Value;

std::string jinja(const std::string& text, std::map<std::string, Value> vars = {}) {
  TemplateContext ctx;
  ctx.variables = std::move(vars);
  return ChatTemplate::parse(text, "test").render({}, false, ctx);
}

struct Failure {
  std::string what, construct;
  std::size_t line = 0, column = 0;
};
Failure failure(const std::string& text) {
  try {
    jinja(text);
  } catch (const TemplateError& e) {
    return {e.what(), e.construct(), e.line(), e.column()};
  }
  ADD_FAILURE() << "no TemplateError for: " << text;
  return {};
}

TEST(Jinja, StatementsAndLoops) {
  EXPECT_EQ(jinja("{% for n in [1, 2, 3] %}{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %},{% endfor %}"), "one,two,many,");
  EXPECT_EQ(jinja("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}"),
            "10TrueFalse3;21FalseFalse3;32FalseTrue3;");
  EXPECT_EQ(jinja("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(jinja("{% for n in [1, 2, 3, 4] %}{% if n == 2 %}{% continue %}{% endif %}{% if n == 4 %}{% break %}{% endif %}{{ n }}{% endfor %}"), "13");
  EXPECT_EQ(jinja("{% for x in [1, 2, 3, 4] if x % 2 == 0 %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% endfor %}"), "1/2:2 2/2:4 ");
  EXPECT_EQ(jinja("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}", {{"d", chat::Dict{{{"x", 1}, {"y", "z"}}}}}),
            "x=1;y=z;xy");
  // A loop body's `set` stays in the loop; namespace() carries values out.
  EXPECT_EQ(jinja("{% set a = 1 %}{% for x in [1] %}{% set a = 2 %}{{ a }}{% endfor %}{{ a }}{% if true %}{% set b = 3 %}{% endif %}{{ b }}"), "213");
  EXPECT_EQ(jinja("{% set ns = namespace(total=0, seen=false) %}{% for x in [1, 2, 3] %}{% set ns.total = ns.total + x %}"
                  "{% if x == 2 %}{% set ns.seen = true %}{% endif %}{% endfor %}{{ ns.total }} {{ ns.seen }}"),
            "6 True");
  EXPECT_EQ(jinja("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('Ann') }} {{ greet('Bo', punct='?') }}"),
            "Hi Ann! Hi Bo?");
  EXPECT_EQ(jinja("{% set x %}a{{ 1 + 1 }}b{% endset %}[{{ x }}]"), "[a2b]");
  EXPECT_EQ(jinja("a{# gone #}b"), "ab");
}

TEST(Jinja, WhitespaceControl) {
  EXPECT_EQ(jinja("a   {{- 'b' -}}   c  {%- if true -%}  d  {%- endif %}"), "abcd");
  EXPECT_EQ(jinja("{% if true %}\nx\n{% endif %}\ny"), "x\ny");  // trim_blocks
  EXPECT_EQ(jinja("a\n    {% if true %}\n    b\n    {% endif %}\nc"), "a\n    b\nc");  // lstrip_blocks
  EXPECT_EQ(jinja("{{ 'a' }}\n{{ 'b' }}\n"), "a\nb\n");  // output tags keep their newline
  EXPECT_EQ(jinja("x {% if true %}y{% endif %}"), "x y");  // not at a line's start: kept
  EXPECT_EQ(jinja("  {%+ if true %}y{% endif +%}\nz"), "  y\nz");
}

TEST(Jinja, Expressions) {
  EXPECT_EQ(jinja("{{ 1 + 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 * 3 - 1 }} {{ -4 }} {{ 1.5 + 1 }} {{ 7 / 2 }} {{ 2 ** 10 }}"),
            "3 3 -4 1 2 5 -4 2.5 3.5 1024");
  EXPECT_EQ(jinja("{{ 'a\\nb\\t\"c\"' }}|{{ \"it's\" }}|{{ 'x' 'y' }}"), "a\nb\t\"c\"|it's|xy");
  EXPECT_EQ(jinja("{{ 'n=' ~ 3 ~ none }} {{ 'a' + 'b' }} {{ [1] + [2] }} {{ 'ab' * 2 }}"), "n=3None ab [1, 2] abab");
  EXPECT_EQ(jinja("{{ 1 < 2 }}{{ 2 <= 1 }}{{ 'a' == 'a' }}{{ 'a' != 'a' }}{{ 3 > 2 }}{{ 1 >= 1 }}{{ 1 == 1.0 }}"), "TrueFalseTrueFalseTrueTrueTrue");
  EXPECT_EQ(jinja("{{ true and false }}{{ true or false }}{{ not true }}{{ not (1 == 2) }}{{ 0 or 'x' }}{{ '' and 1 }}"), "FalseTrueFalseTruex");
  EXPECT_EQ(jinja("{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'k' in d }}{{ 'q' not in d }}", {{"d", chat::Dict{{{"k", 1}}}}}), "TrueTrueTrueTrue");
  EXPECT_EQ(jinja("{{ 'yes' if flag else 'no' }}[{{ 'a' if false }}]", {{"flag", true}}), "yes[]");
  EXPECT_EQ(jinja("{{ m[1:] }} {{ m[:-1] }} {{ m[::-1] }} {{ m[-1] }} {{ 'héllo'[1:3] }} {{ m[9] is defined }}", {{"m", chat::List{1, 2, 3}}}),
            "[2, 3] [1, 2] [3, 2, 1] 3 él False");
  EXPECT_EQ(jinja("{{ {'a': [1, 'x', none, true]} }} {{ d.a }}{{ d['a'] }}{{ d.get('b', 5) }}", {{"d", chat::Dict{{{"a", 1}}}}}),
            "{'a': [1, 'x', None, True]} 115");
  EXPECT_EQ(jinja("[{{ missing }}]{{ none }} {{ true }} {{ 0.1 }} {{ 2.0 }}"), "[]None True 0.1 2.0");
  // Python's float repr: fixed for decimal exponents -4..15, else the exponent form.
  EXPECT_EQ(jinja("{{ 1e15 }} {{ 1e16 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.5 }} {{ 123456789012345678.0 }} {{ 1.0 / 3 }}"),
            "1000000000000000.0 1e+16 0.0001 1e-05 -0.5 1.2345678901234568e+17 0.3333333333333333");
  EXPECT_EQ(jinja("{{ '  Hi There  '.strip() }}|{{ 'ab'.upper() }}|{{ 'a,b,,c'.split(',') }}|{{ 'x y'.split() }}|"
                  "{{ 'hello world'.title() }}|{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith(('x', 'c')) }}|{{ '--x--'.rstrip('-') }}"),
            "Hi There|AB|['a', 'b', '', 'c']|['x', 'y']|Hello World|TrueTrue|--x");
}

TEST(Jinja, FiltersAndTests) {
  EXPECT_EQ(jinja("{{ '  a  ' | trim }}|{{ [1, 2] | length }}|{{ 'héllo' | length }}|{{ 'Ab' | upper }}{{ 'Ab' | lower }}|{{ x | default('d') }}"
                  "|{{ '' | default('e', true) }}|{{ [1, 2, 3] | join(', ') }}|{{ 'aXbX' | replace('X', '-') }}|{{ [4, 5] | first }}{{ [4, 5] | last }}"),
            "a|2|5|ABab|d|e|1, 2, 3|a-b-|45");
  EXPECT_EQ(jinja("{% for k, v in d | items %}{{ k }}{{ v }}{% endfor %}|{{ d | tojson }}|{{ [1, 'é\"', none, true, 1.5] | tojson }}",
                  {{"d", chat::Dict{{{"a", 1}, {"b", chat::List{"x"}}}}}}),
            "a1b['x']|{\"a\": 1, \"b\": [\"x\"]}|[1, \"é\\\"\", null, true, 1.5]");
  EXPECT_EQ(jinja("{{ d | tojson(indent=2) }}", {{"d", chat::Dict{{{"a", chat::List{1, 2}}}}}}), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
  const Value msgs = chat::List{chat::Dict{{{"role", "user"}, {"content", "a"}}}, chat::Dict{{{"role", "assistant"}, {"content", "b"}}},
                                chat::Dict{{{"role", "user"}, {"content", "c"}}}};
  EXPECT_EQ(jinja("{{ (m | selectattr('role', 'equalto', 'user') | list)[-1].content }} {{ m | map(attribute='role') | join('+') }} "
                  "{{ m | rejectattr('role', 'equalto', 'user') | list | length }}",
                  {{"m", msgs}}),
            "c user+assistant+user 1");
  EXPECT_EQ(jinja("{{ x is defined }}{{ y is defined }}{{ y is not defined }}{{ n is none }}{{ s is string }}{{ 3 is number }}"
                  "{{ d is mapping }}{{ 4 is divisibleby 2 }}{{ 3 is odd }}{{ false is false }}{{ s is not string }}",
                  {{"x", 1}, {"n", nullptr}, {"s", "s"}, {"d", chat::Dict{}}}),
            "TrueFalseTrueTrueTrueTrueTrueTrueTrueTrueFalse");
}

// Unsupported constructs and broken templates: TemplateError naming the construct, line and column.
TEST(Jinja, ErrorsNameTheConstructAndWhere) {
  Failure f = failure("Hello\n  {{ name | wordwrap(5) }}");
  EXPECT_EQ(f.construct, "filter 'wordwrap'");
  EXPECT_EQ(f.line, 2u);
  EXPECT_EQ(f.column, 11u);
  EXPECT_NE(f.what.find("chat template test:2:11: filter 'wordwrap': is not supported (supported: abs,"), std::string::npos) << f.what;
  f = failure("{% include 'other.jinja' %}");
  EXPECT_EQ(f.construct, "tag 'include'");
  EXPECT_NE(f.what.find("test:1:1: tag 'include': is not supported"), std::string::npos) << f.what;
  f = failure("a\n{% for x in y %}\n{{ x }}");
  EXPECT_EQ(f.construct, "tag 'for'");
  EXPECT_EQ(f.line, 2u);
  EXPECT_NE(f.what.find("is not closed: the template ends before {% endfor %}"), std::string::npos) << f.what;
  EXPECT_EQ(failure("{{ x is prime }}").construct, "test 'prime'");
  EXPECT_EQ(failure("{% endif %}").construct, "tag 'endif'");
  EXPECT_EQ(failure("{{ 'abc }}").construct, "string literal");
  EXPECT_EQ(failure("{{ a +  }}").what, "chat template test:1:9: expression: expected a value, found '}}'");
  EXPECT_EQ(failure("{{ x").construct, "output {{ }}");
  EXPECT_EQ(failure("{# open").construct, "comment {# #}");
  EXPECT_EQ(failure("{{ 1 $ 2 }}").construct, "character");
  // Render-time errors: types, undefined values, calls.
  EXPECT_EQ(failure("{{ 'a' + 1 }}").what, "chat template test:1:8: operator '+': unsupported operands: the string 'a' and the integer 1");
  EXPECT_EQ(failure("{{ x + 1 }}").what, "chat template test:1:6: operator '+': 'x' is undefined");
  EXPECT_EQ(failure("{{ x.y }}").construct, "attribute 'y'");
  EXPECT_EQ(failure("{{ nope() }}").construct, "call nope()");
  EXPECT_EQ(failure("{{ 'a'.zfill(3) }}").construct, "method string.zfill()");
  EXPECT_EQ(failure("{% set d = {} %}{% set d.a = 1 %}").construct, "set d.a");
  EXPECT_EQ(failure("{{ 1 // 0 }}").what, "chat template test:1:6: operator '//': division by zero");
  EXPECT_EQ(failure("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").construct, "macro 'f'");
  EXPECT_EQ(failure("{{ raise_exception('no ' ~ 'way') }}").what, "chat template test:1:19: raise_exception: the template raised: no way");
  EXPECT_EQ(failure("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}").construct, "nesting");
}

// Malformed templates never crash or hang: every truncation of the real templates (and some with a
// byte changed) either renders or throws TemplateError.
TEST(Jinja, TruncatedTemplatesRenderOrFail) {
  std::mt19937 rng(12345);
  const std::vector<ChatMessage> conv = {{"system", "S"}, {"user", "Hi"}, {"assistant", "Yo"}, {"user", "Bye"}};
  int rendered = 0, failed = 0;
  for (const auto& b : chat::builtin_templates()) {
    const std::string text(b.text);
    for (int k = 0; k < 60; ++k) {
      std::string t = text.substr(0, std::uniform_int_distribution<std::size_t>(0, text.size())(rng));
      if (k % 3 == 0 && !t.empty()) t[std::uniform_int_distribution<std::size_t>(0, t.size() - 1)(rng)] = "{}%#-'\"()[]|.x "[k % 15];
      try {
        ChatTemplate::parse(t, "fuzz").render(conv, true, {});
        ++rendered;
      } catch (const TemplateError&) {
        ++failed;
      }
    }
  }
  EXPECT_EQ(rendered + failed, 360);
  EXPECT_GT(failed, 100);  // most truncations cut a tag
  EXPECT_GT(rendered, 0);
}

}  // namespace
}  // namespace realizar
