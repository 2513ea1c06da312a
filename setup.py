"""Build hook: the one contract file, ``openapi.yaml`` at the top of the repository, is copied
into the built ``pairscreen`` package, so an installed service finds it with no second copy
kept in the source tree. Everything else about the build is in ``pyproject.toml``."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CONTRACT = "openapi.yaml"


class BuildWithContract(build_py):  # type: ignore[misc]  # setuptools ships no type hints
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "pairscreen" / CONTRACT
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(Path(__file__).parent / CONTRACT), str(target))


setup(cmdclass={"build_py": BuildWithContract})
