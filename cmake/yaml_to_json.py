#!/usr/bin/env python3
"""Copies every contracts/**/*.yaml to OUT/**/*.yaml rewritten as JSON with every scalar a string.

For the WebAssembly build, which has no yaml-cpp: its tests read these files through the small
yaml-cpp look-alike over nlohmann::json in tests/support/yaml_json/ (JSON is YAML, so the names and
the loaders' ".yaml" filters stay). BaseLoader keeps scalars as the strings yaml-cpp would see.
Usage: yaml_to_json.py CONTRACTS_DIR OUT_DIR
"""
import json
import pathlib
import sys

import yaml

src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in sorted(src.rglob("*.yaml")):
    dst = out / f.relative_to(src)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(f, encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=yaml.BaseLoader)
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if not dst.exists() or dst.read_text(encoding="utf-8") != text:
        dst.write_text(text, encoding="utf-8")
