"""Install hints for aiond's optional extras, in commands that work as printed.

aiond is installed from its source folder (there is no ``aiond`` on the
package index), so a hint names both the extra, for that folder, and the
packages it stands for, for any other environment. Quoted: zsh reads
unquoted brackets as a glob.
"""
from __future__ import annotations

__all__ = ["EXTRAS", "install_hint"]

# the packages of each extra in pyproject.toml's [project.optional-dependencies]
EXTRAS = {
    "gpu": ["cupy-cuda12x"],
    "serve": ["starlette", "uvicorn", "httptools", "orjson"],
    "dist": ["mpi4py", "mpich"],
    "grpc": ["grpcio", "protobuf"],
    "sparse": ["scipy"],
    "image": ["Pillow"],
    "download": ["requests"],
    "onnx": ["onnx", "onnxruntime"],
    "onednn": ["onednn-cpu-gomp"],
}


def install_hint(extra: str) -> str:
    """``pip install -e '.[extra]'`` (in aiond's source folder) or the packages."""
    return ("pip install -e '.[%s]' in aiond's source folder (or: pip install %s)"
            % (extra, " ".join(EXTRAS[extra])))
