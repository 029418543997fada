"""The build step that ships the top-level `migrations/`, `openapi.yaml` and `asyncapi.yaml`
inside the package.

The repository keeps them at its top level; an installed server still needs them (it migrates
its database at start and serves `/openapi.yaml` and `/asyncapi.yaml`), so building the package
(a wheel, `pip install .`, the Docker image) copies them into `server/_bundled/`. Nothing is
committed twice: a source checkout and an editable install read the top-level files themselves
(`server/files.py` picks whichever is there). Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
from glob import glob

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLED = os.path.join("server", "_bundled")


def bundled_sources() -> list[str]:
    """The files to ship, relative to the project directory (where the build runs)."""
    required = ["openapi.yaml", "asyncapi.yaml", os.path.join("migrations", "env.py")]
    missing = [path for path in required if not os.path.isfile(path)]
    if missing:
        raise RuntimeError(f"cannot build the server without {', '.join(missing)}")
    optional = [os.path.join("migrations", "__init__.py")]
    return [
        *required,
        *(path for path in optional if os.path.isfile(path)),
        *sorted(glob(os.path.join("migrations", "*.mako"))),
        *sorted(glob(os.path.join("migrations", "versions", "*.py"))),
    ]


class BuildPyWithBundled(build_py):
    """build_py that also copies the bundled files into the built package."""

    def bundled(self) -> dict[str, str]:
        """(path in the build, source path) for each bundled file."""
        return {
            os.path.join(self.build_lib, BUNDLED, source): source for source in bundled_sources()
        }

    def build_package_data(self) -> None:
        super().build_package_data()
        # Start afresh so that a file removed from the sources does not linger in build/.
        shutil.rmtree(os.path.join(self.build_lib, BUNDLED), ignore_errors=True)
        for target, source in self.bundled().items():
            self.mkpath(os.path.dirname(target))
            self.copy_file(source, target)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:  # from get_output_mapping, which has them already
            return outputs
        return [*outputs, *self.bundled()]

    def get_output_mapping(self) -> dict[str, str]:
        return dict(sorted({**super().get_output_mapping(), **self.bundled()}.items()))


setup(cmdclass={"build_py": BuildPyWithBundled})
