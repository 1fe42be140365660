"""academiceval: a live, contamination-free long-context writing benchmark built from arXiv papers."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("academiceval")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
