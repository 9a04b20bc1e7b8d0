"""Generate the Python code of proto/arena/v1/arena.proto for the server and the Python SDK.

    python proto/generate.py          # write the generated modules
    python proto/generate.py --check  # exit 1 if a committed module is out of date

The .proto is the single source; the generated modules are committed so that
neither the server nor a bot needs protoc to run. Never edit them by hand.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = "arena/v1/arena.proto"
# (output root, package path of the generated modules)
TARGETS = [(ROOT, "arena.v1"), (ROOT / "clients" / "python", "arena_bot.v1")]


def generate(out_root: Path, package: str) -> dict[Path, str]:
    """Run protoc; return {relative path: text} with imports rewritten for `package`."""
    from grpc_tools import protoc  # only needed to regenerate

    with tempfile.TemporaryDirectory() as tmp:
        args = ["protoc", f"-I{ROOT / 'proto'}", f"--python_out={tmp}", f"--pyi_out={tmp}", f"--grpc_python_out={tmp}"]
        if protoc.main([*args, str(ROOT / "proto" / PROTO)]) != 0:
            raise SystemExit("protoc failed")
        files: dict[Path, str] = {}
        target_dir = Path(*package.split("."))
        for produced in sorted((Path(tmp) / "arena" / "v1").iterdir()):
            text = produced.read_text()
            text = text.replace("from arena.v1 import arena_pb2", f"from {package} import arena_pb2")
            files[target_dir / produced.name] = text
        files[target_dir / "__init__.py"] = '"""Generated from proto/arena/v1/arena.proto by proto/generate.py."""\n'
        return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the committed modules")
    check = parser.parse_args().check
    stale = []
    for out_root, package in TARGETS:
        for relative, text in generate(out_root, package).items():
            path = out_root / relative
            if check:
                if not path.exists() or path.read_text() != text:
                    stale.append(str(path.relative_to(ROOT)))
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    if stale:
        print("out of date (run python proto/generate.py):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
