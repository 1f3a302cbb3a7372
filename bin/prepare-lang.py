#!/usr/bin/env python3
# Copyright 2026 nnetmix authors. Apache 2.0.
"""prepare-lang.py: utils/prepare_lang.sh's work: a lang directory from a dictionary directory (nnetmix/lang/prepare.py)."""
import _require_nnetmix  # noqa: F401  (first: without the venv, one line, not a traceback)
import dataclasses
import sys

from nnetmix.cli.script import ScriptUsage, script_main
from nnetmix.lang.prepare import LangOptions, prepare_lang
from nnetmix.lang.validate import validate_lang_dir

USAGE = "Usage: {prog} [options] <dict-src-dir> <oov-dict-entry> <tmp-dir> <lang-dir>"


def _bool(name: str, text: str) -> bool:
    if text not in ("true", "false"):
        raise ScriptUsage(f"--{name} takes true or false, got '{text}'")
    return text == "true"


def prepare(prog: str, argv) -> int:
    """Options are LangOptions' fields as ``--name=value`` (utils/prepare_lang.sh passes its own)."""
    opts = LangOptions()
    fields = {f.name: f for f in dataclasses.fields(LangOptions)}
    args = list(argv)
    while args and args[0].startswith("--"):
        name, eq, value = args.pop(0)[2:].partition("=")
        key = name.replace("-", "_")
        if key not in fields or not eq:
            raise ScriptUsage(f"invalid option --{name}")
        default = fields[key].default
        try:
            conv = (_bool(name, value) if isinstance(default, bool)
                    else type(default)(value))
        except ValueError:
            raise ScriptUsage(f"bad value for --{name}: '{value}'") from None
        setattr(opts, key, conv)
    if len(args) != 4:
        raise ScriptUsage("")
    src, oov, tmp, lang = args
    s = prepare_lang(src, oov, tmp, lang, opts)
    validate_lang_dir(lang)
    print(f"{prog}: {lang}: {s.num_phones} phones, {s.num_disambig} disambiguation symbols "
          f"(#0 to #{s.num_disambig - 1}), {s.num_words} words, {s.num_prons} pronunciations")
    return 0


def main(argv=None) -> int:
    return script_main(prepare, USAGE, "prepare-lang.py", argv, log=True)


if __name__ == "__main__":
    sys.exit(main())
