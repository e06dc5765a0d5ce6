#!/usr/bin/env python3
"""The public headers document themselves: each opens with a "Step by step" manual, and every
public declaration (function, type, struct field, enumerator, macro) carries a /// comment, on
the line before it or as a ///< comment on its own line.

    api_doc_test.py HEADER...
"""
import re
import sys


def undocumented(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    text = "\n".join(lines)
    problems = []
    if "Step by step" not in text.split("*/", 1)[0]:
        problems.append(f"{path}: the opening comment has no 'Step by step' manual")

    def documented(i):
        """Line i has a ///< comment, or the comment block just above it is ///."""
        if "///<" in lines[i]:
            return True
        j = i - 1
        while j >= 0 and lines[j].strip() == "":
            j -= 1
        return j >= 0 and lines[j].strip().startswith("///")

    depth = 0  # inside a struct or enum body
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("//") or s.startswith("/*") or s.startswith("*") or not s:
            continue
        if depth == 0:
            if s.startswith("SM_API") or re.match(r"typedef\s+(struct|enum)\b", s) or \
               (re.match(r"typedef\b", s) and s.endswith(";")):
                if not documented(i):
                    problems.append(f"{path}:{i + 1}: undocumented: {s}")
            m = re.match(r"#define\s+(SM_\w+)", s)
            if m and not m.group(1).startswith(("SM_API", "SHAPEMATCH_")) and not documented(i) \
                    and m.group(1) not in ("SM_VERSION_MAJOR", "SM_VERSION_MINOR", "SM_VERSION_PATCH"):
                problems.append(f"{path}:{i + 1}: undocumented macro: {s}")
        else:
            # a field or an enumerator: a declaration ending in ';' or ',' (or the last enumerator)
            if not s.startswith("}") and re.match(r"[A-Za-z_]", s) and not documented(i):
                # a continuation of the previous line's declaration needs nothing
                prev = lines[i - 1].strip()
                if not (prev.endswith(",") and "(" in prev and ")" not in prev):
                    problems.append(f"{path}:{i + 1}: undocumented member: {s}")
        depth += line.count("{") - line.count("}")
        if s.startswith('extern "C"'):
            depth -= 1  # the C++ guard is not a body
    return problems


def self_test():
    """The checker finds what it should: a header with two gaps reports two."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".h", delete=False) as f:
        f.write("/* Step by step\n */\n/// Documented.\nSM_API int sm_a(void);\nSM_API int sm_b(void);\n"
                "/// A type.\ntypedef struct sm_t {\n    int x; ///< m\n    int y;\n} sm_t;\n")
    found = undocumented(f.name)
    assert len(found) == 2 and "sm_b" in found[0] and "int y" in found[1], found


def main():
    self_test()
    problems = []
    for path in sys.argv[1:]:
        problems += undocumented(path)
    for p in problems:
        print(p)
    print(f"api_doc_test: {len(problems)} undocumented declaration(s) in {len(sys.argv) - 1} header(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
