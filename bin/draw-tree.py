#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""draw-tree.py: Kaldi's draw-tree (src/bin/draw-tree.cc)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import sys

from nnetmix.cli import OptionParser, run_tool

USAGE = """
Outputs a decision tree description in GraphViz format
Usage: draw-tree.py [options] <phone-symbols> <tree>
e.g.: draw-tree.py phones.txt tree | dot -Gsize=8,10.5 -Tps | ps2pdf - tree.pdf
"""


def main(argv=None) -> int:
    parser = OptionParser(USAGE, prog="draw-tree.py")
    parser.register("query", "", "a query to trace through the tree(format: "
                    "pdf-class/ctx-phone1/.../ctx-phoneN)")
    parser.register("use-tooltips", False, "use tooltips instead of labels")
    parser.register("gen-html", False, "generates HTML boilerplate(useful with SVG)")

    def body(opts, args):
        from nnetmix.errors import FormatError
        from nnetmix.hmm.draw_tree import parse_query, render_tree
        from nnetmix.kaldi.context_dep import read_tree
        from nnetmix.lang.symbols import read_symbol_table

        syms = read_symbol_table(args[0])
        tree = read_tree(args[1])
        query = (parse_query(opts.query, {s: i for s, i in syms}, tree.N) if opts.query
                 else None)
        try:
            text = render_tree(tree, {i: s for s, i in syms}, query, opts.use_tooltips)
        except FormatError as e:  # a phone of the tree missing from the symbol table
            raise FormatError(f"{args[0]}: {e}") from None
        sys.stdout.write(text)
        return 0

    if argv is None:
        argv = sys.argv[1:]
    if any(a in ("--gen-html", "--gen-html=true") for a in argv):
        sys.stdout.write("<html>\n<head><title>Decision Tree</tree></head>\n"
                         "<body><object data=\"tree.svg\" type=\"image/svg+xml\"/>"
                         "</body>\n</html>\n")
        return 0
    return run_tool(parser, (2, 2), body, argv)


if __name__ == "__main__":
    sys.exit(main())
