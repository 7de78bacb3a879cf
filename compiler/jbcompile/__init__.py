"""jbcompile: compile Japanese social-bias benchmarks from YAML sources into Hugging Face datasets."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("jbcompile")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
