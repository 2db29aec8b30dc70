#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Write the installed package's .dist-info (PEP 376/566/627) next to it.

    mkdistinfo.py SITEDIR [INSTALLER]

SITEDIR holds bx/ as installed (make install-python, debian/rules);
this writes SITEDIR/bx-VERSION.dist-info with METADATA (from
python/pyproject.toml), INSTALLER, top_level.txt and RECORD (every file
of bx/ with its sha256 and size), so that pip and importlib.metadata
know the package (``importlib.metadata.version("bx")``).
"""

import base64
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def project():
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        try:
            import tomllib
            return tomllib.load(f)["project"]
        except ImportError:          # Python < 3.11: the few fields
            p, sect = {}, None
            for ln in f.read().decode().splitlines():
                ln = ln.strip()
                if ln.startswith("["):
                    sect = ln
                elif sect == "[project]" and " = " in ln:
                    k, v = ln.split(" = ", 1)
                    if v.startswith('"'):
                        p[k] = v.strip('"')
            return p


def main():
    site = sys.argv[1]
    installer = sys.argv[2] if len(sys.argv) > 2 else "make"
    p = project()
    name, version = p["name"], p["version"]
    lic = p.get("license", {})
    lic = lic.get("text", "") if isinstance(lic, dict) else str(lic)
    di = f"{name}-{version}.dist-info"
    d = os.path.join(site, di)
    os.makedirs(d, exist_ok=True)
    meta = [f"Metadata-Version: 2.1", f"Name: {name}",
            f"Version: {version}", f"Summary: {p.get('description', '')}",
            f"License: {lic}",
            f"Requires-Python: {p.get('requires-python', '>=3')}"]
    for c in p.get("classifiers", []):
        meta.append(f"Classifier: {c}")
    for extra, reqs in p.get("optional-dependencies", {}).items():
        meta.append(f"Provides-Extra: {extra}")
        meta += [f"Requires-Dist: {r}; extra == \"{extra}\"" for r in reqs]
    files = {"METADATA": "\n".join(meta) + "\n",
             "INSTALLER": installer + "\n", "top_level.txt": "bx\n"}
    for n, text in files.items():
        with open(os.path.join(d, n), "w") as f:
            f.write(text)
    rec = []
    for top in ("bx", di):
        for n in sorted(os.listdir(os.path.join(site, top))):
            path = os.path.join(site, top, n)
            if not os.path.isfile(path) or n == "RECORD":
                continue
            with open(path, "rb") as f:
                data = f.read()
            h = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rec.append(f"{top}/{n},sha256={h},{len(data)}")
    rec.append(f"{di}/RECORD,,")
    with open(os.path.join(d, "RECORD"), "w") as f:
        f.write("\n".join(rec) + "\n")


if __name__ == "__main__":
    main()
