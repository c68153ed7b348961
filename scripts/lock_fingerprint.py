"""Print the fingerprint of what pyproject.toml asks to install: the dependencies, the extras,
requires-python and the build requirements (not the tool settings, which do not change the lock).

scripts/lock writes it into requirements.lock; scripts/setup compares it with pyproject.toml to
notice a lock that was not updated after a dependency changed, without needing uv or a network.
Usage: python scripts/lock_fingerprint.py [pyproject.toml]
"""

import hashlib
import json
import sys
import tomllib


def fingerprint(path: str = "pyproject.toml") -> str:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    project = data.get("project", {})
    wanted = {key: project.get(key) for key in
              ("name", "dependencies", "optional-dependencies", "requires-python")}
    wanted["build-system"] = data.get("build-system", {}).get("requires")
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]


if __name__ == "__main__":
    print(fingerprint(*sys.argv[1:2]))
